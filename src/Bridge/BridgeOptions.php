<?php

declare(strict_types=1);

namespace Weft\Bridge;

use Psr\Log\LoggerInterface;

/**
 * Options shared by the framework bridges.
 *
 * Leak warnings cost a fingerprint of every static property and every shared service after each
 * request (0.5 to 0.8 ms on the fixture apps), so they are meant for development:
 * fromEnvironment() turns them on when the application runs in debug mode or in a dev/local/test
 * environment, and WEFT_LEAK_WARNINGS=1 or =0 overrides that either way.
 */
final readonly class BridgeOptions
{
    public const DEV_ENVIRONMENTS = ['dev', 'local', 'development', 'test', 'testing'];

    /**
     * @param list<string> $leakIgnore class names or namespace prefixes ("Acme\\Cache\\") whose
     *        changes are expected (caches that only grow) and never reported
     * @param array<string, mixed> $server extra $_SERVER values for every request
     *        (SERVER_SOFTWARE, HTTPS, ...); per-request values win
     */
    public function __construct(
        public bool $leakWarnings = false,
        public array $leakIgnore = [],
        public array $server = [],
        public ?LoggerInterface $logger = null,
        public int $instances = 1,
    ) {
        if ($instances < 1) {
            throw new \InvalidArgumentException("A framework needs at least one instance per worker, got $instances");
        }
    }

    /**
     * @param bool|null $debug the application's debug flag; null reads APP_DEBUG
     * @param string|null $environment the application's environment; null reads APP_ENV
     */
    public static function fromEnvironment(?bool $debug = null, ?string $environment = null, array $leakIgnore = []): self
    {
        return new self(
            leakWarnings: self::leakWarningsWanted($debug, $environment),
            leakIgnore: $leakIgnore,
            instances: self::instancesWanted(),
        );
    }

    /**
     * Framework instances per worker: `serve --app-instances N` (which sets WEFT_APP_INSTANCES for
     * the workers), else 1. Only in coroutine mode can requests overlap in a worker; sync and fpm
     * modes use one.
     */
    public static function instancesWanted(): int
    {
        $value = self::env('WEFT_APP_INSTANCES');
        if ($value === null || $value === '') {
            return 1;
        }
        $instances = filter_var($value, FILTER_VALIDATE_INT, ['options' => ['min_range' => 1]]);
        if ($instances === false) {
            throw new \InvalidArgumentException("WEFT_APP_INSTANCES must be a whole number of at least 1, got '$value'");
        }
        return $instances;
    }

    public static function leakWarningsWanted(?bool $debug = null, ?string $environment = null): bool
    {
        $forced = self::env('WEFT_LEAK_WARNINGS');
        if ($forced !== null && $forced !== '') {
            return filter_var($forced, FILTER_VALIDATE_BOOL);
        }
        $debug ??= filter_var(self::env('APP_DEBUG') ?? 'false', FILTER_VALIDATE_BOOL);
        $environment ??= self::env('APP_ENV') ?? 'production';
        return $debug || \in_array(strtolower($environment), self::DEV_ENVIRONMENTS, true);
    }

    public function withLogger(LoggerInterface $logger): self
    {
        return new self($this->leakWarnings, $this->leakIgnore, $this->server, $logger, $this->instances);
    }

    public function withInstances(int $instances): self
    {
        return new self($this->leakWarnings, $this->leakIgnore, $this->server, $this->logger, $instances);
    }

    /**
     * The given logger, or the server's (Weft\logger()): one record in the server log, tagged with
     * the worker and in its format (--log-file, --log-format), not a line on the worker's stderr
     * that the master would log again as "stderr: ...".
     */
    public function logger(): LoggerInterface
    {
        return $this->logger ?? \Weft\logger();
    }

    private static function env(string $name): ?string
    {
        $value = $_SERVER[$name] ?? $_ENV[$name] ?? null;
        if (\is_bool($value)) {
            return $value ? 'true' : 'false';
        }
        if (\is_string($value)) {
            return $value;
        }
        $value = getenv($name);
        return $value === false ? null : $value;
    }
}
