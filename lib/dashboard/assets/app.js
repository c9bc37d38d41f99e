// The dashboard page's script: takes the snapshots the server sends (Server-Sent Events) and renders each section
// with the same code the server rendered the page with (render.js). EventSource reconnects by itself; the header
// says whether the page is live.
import { renderSection, SECTIONS, withDepth } from './render.js';

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
  // each stream's first event is a whole snapshot; later ones carry only the new depth points (see stream.ts)
  let depth = [];
  events.addEventListener('message', (e) => {
    const snapshot = withDepth(depth, JSON.parse(e.data));
    depth = snapshot.depth;
    show(snapshot);
    status('live', 'live');
  });
  events.addEventListener('error', () => {
    status('connection lost · reconnecting…', 'lost');
    if (events.readyState === EventSource.CLOSED) setTimeout(connect, 3000);
  });
}

connect();
