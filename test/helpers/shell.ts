// Runs a command line as a user types it (bash, with the environment it names), for the reference's curl lines. Where
// curl is not installed, a stand-in that speaks the same few options (-X, -H, -d) runs instead, so that the line
// itself is never rewritten.
import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

function onPath(command: string): boolean {
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

let stand: string | null = null;

/** A PATH on which `curl` runs: the system's, else one with test/helpers/curl.mjs in front. */
function pathWithCurl(): string {
  const path = process.env.PATH ?? '';
  if (onPath('curl')) return path;
  if (!stand) {
    stand = mkdtempSync(join(tmpdir(), 'pgqueue-curl-'));
    const script = fileURLToPath(new URL('./curl.mjs', import.meta.url));
    writeFileSync(join(stand, 'curl'), `#!/bin/sh\nexec "${process.execPath}" "${script}" "$@"\n`, { mode: 0o755 });
  }
  return `${stand}${delimiter}${path}`;
}

/** What `line` prints, run by bash with `env` added to this process's environment; rejects when it exits non-zero. */
export function shell(line: string, env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', line], { env: { ...process.env, ...env, PATH: pathWithCurl() }, timeout: 30_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${line}\nfailed: ${err.message}\n${stderr}`)) : resolve(stdout),
    );
  });
}
