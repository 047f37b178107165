import { ConfigError, loadConfig } from '../../src/config';

describe('configuration from the environment', () => {
  test('defaults', () => {
    const config = loadConfig({});
    expect(config.http).toMatchObject({ host: '127.0.0.1', port: 3000, portExplicit: false });
    expect(config.temporal).toMatchObject({ namespace: 'default', taskQueue: 'bosun', port: 7233, uiPort: 8233 });
    expect(config.servers.healthIntervalSeconds).toBe(60);
    expect(config.home).toMatch(/\.bosun$/);
    expect(Object.isFrozen(config)).toBe(true);
  });

  test('a bad value names the variable', () => {
    expect(() => loadConfig({ PORT: '99999' })).toThrow(ConfigError);
    expect(() => loadConfig({ PORT: '99999' })).toThrow(/PORT \("99999"\)/);
    expect(() => loadConfig({ SERVER_HEALTH_INTERVAL_SECONDS: '0' })).toThrow(/SERVER_HEALTH_INTERVAL_SECONDS/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).toThrow(/LOG_LEVEL/);
  });

  test('secret values are never echoed in the message', () => {
    expect(() => loadConfig({ BOSUN_SECRET_KEY: '' })).toThrow(/BOSUN_SECRET_KEY \("<hidden>"\)/);
  });
});
