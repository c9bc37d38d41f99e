// The browser the dashboard's page tests drive, found without anything installed by hand: Debian's Chromium when the
// machine has one, else the Chromium that ships inside the @sparticuz/chromium devDependency, so a clean clone's
// `npm ci && npm test` passes on a machine without /usr/bin/chromium.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium as playwright, type Browser } from 'playwright-core';

/** Where Debian's package puts Chromium; used whenever it is there. */
export const DEBIAN_CHROMIUM = '/usr/bin/chromium';

// The flags the Debian browser has always run with: root in a container needs --no-sandbox, and there is no GPU.
const DEBIAN_ARGS = ['--headless', '--no-sandbox', '--disable-gpu'];

// @sparticuz/chromium's args are made for AWS Lambda. Three of them are left out: --disable-web-security and
// --allow-running-insecure-content turn off the same-origin policy and mixed-content blocking, and the page must be
// tested under them like a user's browser (an error that is markup runs nothing, another origin is refused);
// --single-process, Lambda's way around its sandbox, ends the whole browser (SIGTRAP) when a second page closes,
// as the job view's test does.
const LAMBDA_ONLY_ARGS = new Set(['--disable-web-security', '--allow-running-insecure-content', '--single-process']);

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Which browser a test launches, and with which flags. */
export interface BrowserChoice {
  executablePath: string;
  args: string[];
  /** Where it came from, for messages: `debian` or `@sparticuz/chromium <version>`. */
  source: string;
}

/** Debian's Chromium when present, else the packaged one (unpacked on first use, about 2 s and 210 MB in the temp folder). */
export async function chooseBrowser(): Promise<BrowserChoice> {
  if (existsSync(DEBIAN_CHROMIUM)) return { executablePath: DEBIAN_CHROMIUM, args: DEBIAN_ARGS, source: 'debian' };
  // the npm package ships only a Linux x64 binary (its README: arm64 comes as a separate download)
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error(
      `no browser: ${DEBIAN_CHROMIUM} is missing, and @sparticuz/chromium ships Chromium for Linux x64 only (this is ${process.platform} ${process.arch})`,
    );
  const { default: packaged } = await import('@sparticuz/chromium');
  const version = packagedVersion();
  return {
    executablePath: await unpackPackagedChromium(version),
    args: packaged.args.filter((arg) => !LAMBDA_ONLY_ARGS.has(arg)),
    source: `@sparticuz/chromium ${version}`,
  };
}

/** Launches the chosen browser headless; close it in afterAll. */
export async function launchBrowser(): Promise<Browser> {
  const choice = await chooseBrowser();
  try {
    return await playwright.launch({ executablePath: choice.executablePath, args: choice.args, headless: true });
  } catch (err) {
    throw new Error(`${choice.source} at ${choice.executablePath} did not start: ${String(err)}`, { cause: err });
  }
}

function packagedVersion(): string {
  // The package's exports do not include its package.json, so it is read from the folder npm installed it in.
  const manifest = join(repoRoot, 'node_modules', '@sparticuz', 'chromium', 'package.json');
  return (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version;
}

/**
 * Unpacks the packaged Chromium into a folder of the temp folder named by its version, once per machine.
 *
 * `executablePath()` on its own unpacks into the temp folder's root and reuses any `chromium` it finds there,
 * whatever its version and however much of it was written (two test runs starting together, or one stopped while
 * unpacking, would leave the next a broken binary). So it runs in a child whose TMPDIR is a fresh folder, and
 * that folder is renamed into place in one step: the versioned folder, once it exists, is complete.
 */
async function unpackPackagedChromium(version: string): Promise<string> {
  const dir = join(tmpdir(), `pgqueue-chromium-${version}`);
  if (existsSync(join(dir, 'chromium'))) return join(dir, 'chromium');
  const staging = mkdtempSync(join(tmpdir(), 'pgqueue-chromium-unpacking-'));
  try {
    await promisify(execFile)(
      process.execPath,
      ['--input-type=module', '-e', "const { default: c } = await import('@sparticuz/chromium'); await c.executablePath();"],
      { cwd: repoRoot, env: { ...process.env, TMPDIR: staging } },
    );
    try {
      renameSync(staging, dir);
    } catch (err) {
      // another run renamed its own copy into place first: use that one
      if (!existsSync(join(dir, 'chromium'))) throw err;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return join(dir, 'chromium');
}
