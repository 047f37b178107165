test('phases', async () => {
  const mods = ['mongoose', '@temporalio/client', '@temporalio/worker', '@temporalio/workflow', 'express', 'socket.io', 'zod', '@modelcontextprotocol/sdk/server/mcp.js', 'openid-client', 'ssh2', 'helmet', 'luxon', 'cron-parser', 'supertest', 'prom-client', 'pino', '../../src/api/openapi', '../../src/compose', '../support/bosun'];
  for (const m of mods) {
    const t = Date.now();
    try { await import(m); console.log(m, Date.now() - t); } catch (e) { console.log(m, 'missing'); }
  }
}, 60000);
