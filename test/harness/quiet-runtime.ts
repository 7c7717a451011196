import { DefaultLogger, Runtime } from '@temporalio/worker';

// Worker state changes are INFO lines; tests only need warnings and errors from the SDK.
Runtime.install({ logger: new DefaultLogger((process.env.TEST_TEMPORAL_LOG_LEVEL as 'WARN') ?? 'WARN') });
