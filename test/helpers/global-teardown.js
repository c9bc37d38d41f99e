import { stopTestDatabase } from './global-setup.js';

export default async function globalTeardown() {
  await stopTestDatabase();
}
