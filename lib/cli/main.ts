#!/usr/bin/env node
// The `pgqueue` command (package.json's bin). It sets the exit code rather than calling process.exit, so that the
// output still buffered in a pipe is written and the connections close before the process ends on its own.
import { processIo } from './io.js';
import { run } from './program.js';

process.exitCode = await run(process.argv.slice(2), processIo());
