// The dashboard page's script: takes the snapshots the server sends (Server-Sent Events) and renders each section
// with the same code the server rendered the page with (render.js). EventSource reconnects by itself; the header
// says whether the page is live.
import { renderSection, SECTIONS } from './render.js';

const base = document.body.dataset.base ?? '';
const connection = document.getElementById('connection');

function status(text, state) {
  if (!connection) return;
  connection.textContent = text;
  connection.dataset.state = state;
}

function show(snapshot) {
  for (const id of SECTIONS) {
    const el = document.getElementById(id);
    if (el) el.innerHTML = renderSection(id, snapshot, base);
  }
}

/** Listens; EventSource retries a dropped connection itself, but gives up on an answer that is no stream (a proxy's 502). */
function connect() {
  const events = new EventSource(`${base}/events`);
  events.addEventListener('open', () => status('live', 'live'));
  events.addEventListener('message', (e) => {
    show(JSON.parse(e.data));
    status('live', 'live');
  });
  events.addEventListener('error', () => {
    status('connection lost · reconnecting…', 'lost');
    if (events.readyState === EventSource.CLOSED) setTimeout(connect, 3000);
  });
}

connect();
