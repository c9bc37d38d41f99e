// A stand-in for curl where it is not installed (test/helpers/shell.ts): -X, -H and -d as curl takes them, the body
// of the answer on stdout whatever its status (as curl without -f).
const args = process.argv.slice(2);
let method;
let url;
let body;
const headers = {};
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '-X' || a === '--request') method = args[++i];
  else if (a === '-H' || a === '--header') {
    const h = args[++i];
    const colon = h.indexOf(':');
    headers[h.slice(0, colon).trim().toLowerCase()] = h.slice(colon + 1).trim();
  } else if (a === '-d' || a === '--data') body = args[++i];
  else if (a.startsWith('-')) {
    process.stderr.write(`curl stand-in: ${a} is not supported\n`);
    process.exit(2);
  } else url = a;
}
// curl's own: a body sent with -d is form-encoded unless the line says otherwise, and makes the request a POST
if (body !== undefined) headers['content-type'] ??= 'application/x-www-form-urlencoded';
const res = await fetch(url, { method: method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
process.stdout.write(await res.text());
