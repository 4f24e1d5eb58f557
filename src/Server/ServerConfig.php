<?php

declare(strict_types=1);

namespace Weft\Server;

use Weft\Socket\ListenOptions;

/** Everything the master needs to run. Immutable; built by the CLI or by code. */
final class ServerConfig
{
    public const DEFAULT_GRACE = 10.0;
    public const DEFAULT_MAX_CONNECTIONS = 10_000;
    /** Like php-fpm's request_terminate_timeout in spirit: a worker silent this long is stuck. */
    public const DEFAULT_WORKER_TIMEOUT = 30.0;
    /**
     * Unsent output a worker's connections may hold together (see OutputBudget): a quarter of the CLI's
     * default --memory-limit, which derives it from the limit given.
     */
    public const DEFAULT_OUTPUT_BUDGET = 32 * 1024 * 1024;

    /**
     * @param \Closure(): Protocol $handlerFactory called in each worker after fork: loads the
     *        application afresh (that is what makes reload work) and returns the protocol
     * @param float $maxRequestTime seconds a request may run before it is cancelled and answered 504 (0: no limit)
     */
    public function __construct(
        public readonly \Closure $handlerFactory,
        public readonly string $host = '127.0.0.1',
        public readonly int $port = 8080,
        public readonly int $workers = 1,
        public readonly string $mode = 'coroutine',
        public readonly string $loop = 'auto',
        public readonly int $maxRequests = 0,
        public readonly int $maxConnections = self::DEFAULT_MAX_CONNECTIONS,
        public readonly float $grace = self::DEFAULT_GRACE,
        public readonly int $backlog = ListenOptions::DEFAULT_BACKLOG,
        public readonly ?string $pidFile = null,
        public readonly ?string $logFile = null,
        public readonly bool $daemon = false,
        public readonly string $name = 'weft',
        public readonly int $maxCoroutines = \Weft\Coroutine\Scheduler::DEFAULT_MAX_COROUTINES,
        public readonly float $maxRequestTime = 0.0,
        /** Seconds a worker may go without reporting before it is killed and replaced (0: never). */
        public readonly float $workerTimeout = self::DEFAULT_WORKER_TIMEOUT,
        /** Weft\Hook\Hooks kinds the workers enable (coroutine mode only; see --hooks) */
        public readonly int $hooks = 0,
        /** seconds a coroutine-mode worker may be held before the log names the call (0: off) */
        public readonly float $blockingThreshold = 0.0,
        /** @var list<MasterHook> run in the master beside its loop (metrics endpoint, systemd notify) */
        public readonly array $masterHooks = [],
        /** @var null|\Closure(): array<string, mixed> figures merged into each worker's stats report */
        public readonly ?\Closure $workerStats = null,
        /** bytes of unsent output a worker holds at most (OutputBudget); 0: each connection's own bound only */
        public readonly int $outputBudget = self::DEFAULT_OUTPUT_BUDGET,
        /** TLS on the listener (--tls-cert): certificates checked in each worker as it loads, so a reload renews them */
        public readonly ?\Weft\Socket\Tls\TlsConfig $tls = null,
        /** @var list<ExtraListener> more addresses served by the workers (--redirect-http) */
        public readonly array $extraListeners = [],
        /** each worker's PHP memory_limit in bytes, set before the application loads (0: none; null: PHP's own) */
        public readonly ?int $memoryLimit = null,
        /**
         * @var null|\Closure(): string what else a worker reopens on SIGUSR1 beside the server log (the
         *      access log), named for the log line
         */
        public readonly ?\Closure $reopenAlso = null,
    ) {
        if ($workers < 1) {
            throw new \InvalidArgumentException('--workers must be at least 1');
        }
        if (!\in_array($mode, ['coroutine', 'sync'], true)) {
            throw new \InvalidArgumentException("Unknown mode '$mode' for the Weft server (coroutine or sync)");
        }
        if ($memoryLimit !== null && $memoryLimit < 0) {
            throw new \InvalidArgumentException('The memory limit cannot be negative');
        }
        if ($outputBudget < 0) {
            throw new \InvalidArgumentException('The output budget cannot be negative');
        }
    }

    public function address(): string
    {
        return (\str_contains($this->host, ':') ? "[{$this->host}]" : $this->host) . ':' . $this->port;
    }

    /** The control socket sits beside the pid file: `bin/weft status` asks the master there. */
    public function controlPath(): ?string
    {
        return $this->pidFile === null ? null : $this->pidFile . '.sock';
    }
}
