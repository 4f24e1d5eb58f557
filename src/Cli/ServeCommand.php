<?php

declare(strict_types=1);

namespace Weft\Cli;

use Weft\Cli\Config\AvailableCpus;
use Weft\Cli\Config\Configuration;
use Weft\Hook\Hooks;
use Weft\Hook\WorkerHooks;
use Weft\Http\Compression\GzipOptions;
use Weft\Http\Parser\Limits;
use Weft\Http\Server\HttpProtocol;
use Weft\Http\Server\HttpOptions;
use Weft\Http\Server\TrustedProxies;
use Weft\Http\Static\StaticOptions;
use Weft\Line\LineCodec;
use Weft\Line\LineProtocol;
use Weft\Loop\DriverFactory;
use Weft\Loop\NativeLoopMissing;
use Weft\Mode\AppLoader;
use Weft\Observe\MetricsServer;
use Weft\Observe\AccessLog;
use Weft\Observe\RequestMetrics;
use Weft\Observe\SystemdNotifier;
use Weft\Server\AlreadyRunning;
use Weft\Server\Logger;
use Weft\Server\Master;
use Weft\Server\PidFile;
use Weft\Server\RuntimeFiles;
use Weft\Server\ServerConfig;
use Weft\Server\UnsafePath;
use Weft\Socket\ListenException;
use Weft\Socket\Listener;
use Weft\Socket\ListenOptions;

final class ServeCommand
{
    /** php-fpm's default memory_limit: a handler that runs away fails long before the machine does. */
    public const DEFAULT_MEMORY_LIMIT = 128 * 1024 * 1024;

    /** @return array<string, array{0: string, 1: mixed, 2: string, 3?: list<string>}> */
    public static function spec(): array
    {
        return [
            'host' => ['string', '127.0.0.1', 'address to listen on'],
            'port' => ['int', 8080, 'port to listen on (0: any free port)'],
            'workers' => ['int', self::cpus(), 'worker processes (fpm mode: the php-fpm pool size); default: the CPUs this process may use'],
            'mode' => ['string', 'coroutine', 'how requests run', ['coroutine', 'sync', 'fpm']],
            'protocol' => ['string', 'http', 'wire protocol', ['http', 'line']],
            'loop' => ['string', 'auto', 'event loop backend', DriverFactory::BACKENDS],
            'max-requests' => ['int', 0, 'recycle a worker after this many requests (0: never)'],
            'max-connections' => ['int', ServerConfig::DEFAULT_MAX_CONNECTIONS, 'open connections per worker; more are refused (503)'],
            'max-body' => ['bytes', Limits::DEFAULT_MAX_BODY_BYTES, 'largest request body (413 beyond)'],
            'max-header' => ['bytes', Limits::DEFAULT_MAX_HEADER_BYTES, 'largest request line + headers (431/414 beyond)'],
            'header-timeout' => ['float', HttpOptions::DEFAULT_HEADER_TIMEOUT, 'seconds to receive a request head (408 beyond)'],
            'body-timeout' => ['float', HttpOptions::DEFAULT_BODY_TIMEOUT, 'seconds allowed between two reads of a request body (408 beyond)'],
            'idle-timeout' => ['float', HttpOptions::DEFAULT_IDLE_TIMEOUT, 'seconds an idle keep-alive connection stays open'],
            'send-timeout' => ['float', HttpOptions::DEFAULT_SEND_TIMEOUT, 'seconds a client may leave our answer unread before it is cut off'],
            'max-request-time' => ['float', 0.0, 'seconds a request may run before it is cancelled and answered 504 (0: no limit)'],
            'extra-methods' => ['list', [], 'request methods to accept besides the registered ones (others: 501)'],
            'max-line' => ['bytes', LineCodec::DEFAULT_MAX_LINE, 'line protocol: longest line'],
            'grace' => ['float', ServerConfig::DEFAULT_GRACE, 'seconds in-flight requests get on stop or reload'],
            'backlog' => ['int', ListenOptions::DEFAULT_BACKLOG, 'listen backlog (capped by net.core.somaxconn)'],
            'max-coroutines' => ['int', \Weft\Coroutine\Scheduler::DEFAULT_MAX_COROUTINES, 'coroutines per worker (each holds a Fiber)'],
            'app-instances' => ['int', 1, 'coroutine mode: booted framework instances per worker (Laravel, Symfony bridges), each serving one request at a time'],
            'blocking-threshold' => ['float', \Weft\Hook\BlockingDetector::DEFAULT_THRESHOLD, 'coroutine mode: log the request and PHP stack of a call that holds a worker longer than this many seconds (0: off)'],
            'hooks' => ['string', 'all', 'coroutine mode: blocking PHP calls that suspend the coroutine instead (all, none, or a list of ' . \implode(',', \array_keys(Hooks::KINDS)) . ')'],
            'memory-limit' => ['bytes', self::DEFAULT_MEMORY_LIMIT, "each worker's PHP memory_limit; a request beyond it fails and the worker is replaced (0: none); half of it bounds requests being received, a quarter output waiting for clients"],
            'worker-timeout' => ['float', ServerConfig::DEFAULT_WORKER_TIMEOUT, 'seconds a worker may go without reporting to the master before it is killed and replaced (0: never)'],
            'pid-file' => ['string', null, 'pid file (default: RUNDIR/weft-PORT.pid); the control socket is PIDFILE.sock'],
            'log-file' => ['string', null, 'log file (default: stderr; with --daemon: RUNDIR/weft-PORT.log)'],
            'log-level' => ['string', 'info', 'least severe level logged', \array_keys(Logger::LEVELS)],
            'log-format' => ['string', 'text', 'server log format: text, or json (one object per line)', Logger::FORMATS],
            'access-log' => ['string', null, 'access log: one line per HTTP request to FILE, or - for stdout (default: off)'],
            'access-log-format' => ['string', 'combined', 'access log format: combined (Combined Log Format + duration, worker), or json', AccessLog::FORMATS],
            'trusted-proxies' => ['list', [], 'addresses or CIDR ranges (IPv4, IPv6; private, loopback) of reverse proxies whose --proxy-header names the client, who then is the request\'s and the access log\'s address (default: none)'],
            'proxy-header' => ['string', TrustedProxies::X_FORWARDED_FOR, 'where the trusted proxies name the client: x-forwarded-for (and X-Forwarded-Proto), or forwarded (RFC 7239)', TrustedProxies::HEADERS],
            'http2' => ['string', 'on', 'HTTP/2: over TLS when the client chooses h2 (ALPN), and in cleartext for clients with prior knowledge (h2c)', ['on', 'off']],
            'http2-max-streams' => ['int', \Weft\Http2\Http2Protocol::DEFAULT_MAX_CONCURRENT_STREAMS, 'HTTP/2: streams a connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS); more are refused'],
            'http2-max-resets' => ['int', \Weft\Http2\Http2Protocol::DEFAULT_MAX_RESETS, 'HTTP/2: streams a client may reset within 10 s before its connection is closed (rapid reset, CVE-2023-44487)'],
            'tls-cert' => ['list', [], 'serve HTTPS: PEM certificate file (its chain after it); NAME=FILE for the certificate of server name NAME (SNI, *.example.org for subdomains); the first without NAME is the default'],
            'tls-key' => ['list', [], "--tls-cert's private keys, FILE or NAME=FILE as there (default: the key is in the certificate's file)"],
            'tls-handshake-timeout' => ['float', \Weft\Socket\Tls\TlsConfig::DEFAULT_HANDSHAKE_TIMEOUT, 'seconds a client has to complete the TLS handshake before its connection is closed'],
            'tls-ciphers' => ['string', null, "TLS 1.2 cipher list, OpenSSL's syntax (default: Mozilla's intermediate policy)"],
            'redirect-http' => ['string', null, 'with --tls-cert: also listen for plain HTTP on [HOST:]PORT and redirect every request to the same URL over HTTPS (301; 308 for methods other than GET and HEAD)'],
            'hsts' => ['int', 0, 'with --tls-cert: send Strict-Transport-Security with this max-age in seconds on HTTPS answers (0: off)'],
            'hsts-subdomains' => ['bool', false, '--hsts: add includeSubDomains'],
            'daemon' => ['bool', false, 'run in the background'],
            'debug' => ['bool', false, 'show exception traces in 500 responses'],
            'static' => ['string', null, 'serve files from this directory before the application'],
            'static-symlinks' => ['bool', false, 'serve files reached through symlinks that leave the --static directory'],
            'static-dotfiles' => ['bool', false, 'serve names starting with "." under --static'],
            'gzip' => ['string', 'on', 'gzip compressible responses for clients that accept it, and serve precompressed FILE.gz / FILE.br next to --static files', ['on', 'off']],
            'gzip-min-length' => ['bytes', GzipOptions::DEFAULT_MIN_LENGTH, 'smallest response body to compress'],
            'gzip-types' => ['list', GzipOptions::DEFAULT_TYPES, 'media types to compress (patterns like text/*)'],
            'gzip-level' => ['int', GzipOptions::DEFAULT_LEVEL, 'gzip compression level, 1 (fast) to 9 (small)'],
            'ws-max-message' => ['bytes', \Weft\WebSocket\WebSocketOptions::DEFAULT_MAX_MESSAGE, 'WebSocket: largest message (closed with 1009 beyond)'],
            'ws-idle-timeout' => ['float', \Weft\WebSocket\WebSocketOptions::DEFAULT_IDLE_TIMEOUT, 'WebSocket: seconds without a frame either way before closing (1001)'],
            'ws-memory' => ['bytes', null, 'WebSocket: memory the open WebSockets of a worker may hold, each charged what an idle one costs; handshakes beyond it get a 503 (default: half of --memory-limit less what the loaded application holds, at least an eighth of it; 0: no bound)'],
            'opcache' => ['string', 'on', 'opcache (and the JIT in the resident modes)', ['on', 'off']],
            'preload' => ['string', null, 'fpm mode: opcache.preload script (see bin/weft preload)'],
            'metrics' => ['string', null, 'serve /health and /metrics (Prometheus) from the master on HOST:PORT (default: off)'],
            'watch' => ['bool', false, 'development: reload the workers when a PHP, .env or config file under the application\'s directory changes (refused with --daemon or APP_ENV=prod/production)'],
            'watch-path' => ['list', [], '--watch: more files, directories or globs to watch (templates/**/*.twig)'],
            'watch-with' => ['string', 'auto', '--watch: how changes are seen: inotify (needs the native extension), polling (every 0.5 s; network and container mounts), auto', ['auto', 'inotify', 'polling']],
            'watch-force' => ['bool', false, 'allow --watch with --daemon or APP_ENV=prod/production'],
            'config' => ['string', null, 'configuration file: a PHP file returning an array (weft.config.php), or an INI file (weft.ini) (also WEFT_CONFIG)'],
            'help' => ['bool', false, 'show this help'],
        ];
    }

    /** @param list<string> $args */
    public function run(array $args): int
    {
        // CLI > WEFT_* environment > --config file > defaults, for every option in spec().
        $configuration = Configuration::resolve($args, self::spec());
        try {
            return $this->serve($configuration->options);
        } catch (UsageError $e) {
            throw $configuration->explain($e);
        }
    }

    private function serve(Options $options): int
    {
        if ($options->get('help')) {
            echo "Usage: bin/weft serve APP.php [options]\n\n" . Options::help(self::spec()) . "\n";
            return 0;
        }
        $app = $options->arguments[0] ?? throw new UsageError('serve needs an application file: bin/weft serve APP.php');
        if (\count($options->arguments) > 1) {
            throw new UsageError("unexpected argument '{$options->arguments[1]}'");
        }
        if (!\is_file($app)) {
            throw new UsageError("application file '$app' not found");
        }
        $app = (string) \realpath($app);
        $port = $options->get('port');
        if ($port < 0 || $port > 65535) {
            throw new UsageError("option '--port' must be between 0 and 65535, got $port");
        }
        foreach (['workers', 'max-connections', 'backlog', 'max-coroutines', 'app-instances', 'http2-max-streams', 'http2-max-resets'] as $positive) {
            if ($options->get($positive) < 1) {
                throw new UsageError("option '--$positive' must be at least 1");
            }
        }
        foreach (['header-timeout', 'body-timeout', 'idle-timeout', 'send-timeout', 'ws-idle-timeout'] as $timeout) {
            if ($options->get($timeout) <= 0) {
                throw new UsageError("option '--$timeout' must be positive");
            }
        }
        // Read by the framework bridges (BridgeOptions::instancesWanted()) in each worker. Only in
        // coroutine mode can requests overlap in a worker: sync and fpm modes need one instance.
        $instances = $options->get('mode') === 'coroutine' ? (string) $options->get('app-instances') : '1';
        \putenv("WEFT_APP_INSTANCES=$instances");
        $_ENV['WEFT_APP_INSTANCES'] = $_SERVER['WEFT_APP_INSTANCES'] = $instances;
        if ($options->get('max-request-time') < 0) {
            throw new UsageError("option '--max-request-time' cannot be negative");
        }
        if ($options->get('max-requests') < 0) {
            throw new UsageError("option '--max-requests' cannot be negative");
        }
        if ($options->get('loop') === 'epoll' && !DriverFactory::epollAvailable()) {
            throw new UsageError(NativeLoopMissing::MESSAGE . ' ' . PhpRuntime::extensionHint() . ' Or use --loop select.');
        }
        if ($options->get('blocking-threshold') < 0) {
            throw new UsageError("option '--blocking-threshold' cannot be negative");
        }
        try {
            $hooks = Hooks::parse($options->get('hooks'));
        } catch (\InvalidArgumentException $e) {
            throw new UsageError("option '--hooks': " . $e->getMessage());
        }
        $workerTimeout = $options->get('worker-timeout');
        if ($workerTimeout < 0 || ($workerTimeout > 0 && $workerTimeout < 2)) {
            // Workers report once a second: less than two would take a busy second for a stuck worker.
            throw new UsageError("option '--worker-timeout' must be 0 (off) or at least 2 seconds");
        }
        self::checkWatch($options);
        if ($options->get('mode') === 'fpm') {
            // Usage errors first: a bad command line is exit 2 whatever runs on the port.
            if ($options->get('static') !== null) {
                throw new UsageError("option '--static' is not available in fpm mode (nginx there can serve files itself)");
            }
            if ($options->get('access-log') !== null) {
                throw new UsageError("option '--access-log' is not available in fpm mode (nginx serves the requests there: its own access_log applies)");
            }
            if ($options->get('metrics') !== null) {
                throw new UsageError("option '--metrics' is not available in fpm mode (bin/weft status shows php-fpm's and nginx's figures)");
            }
            if ($options->get('tls-cert') !== []) {
                throw new UsageError("option '--tls-cert' is not available in fpm mode (nginx receives the connections there: give it the certificate)");
            }
            if ($options->get('trusted-proxies') !== []) {
                throw new UsageError("option '--trusted-proxies' is not available in fpm mode (nginx receives the connections there: its real_ip module applies)");
            }
        }
        try {
            $tls = self::tls($options);
        } catch (\Weft\Socket\Tls\TlsConfigError $e) {
            \fwrite(\STDERR, 'weft: ' . $e->getMessage() . "\n");
            return 1;
        }
        $listener = null;
        if ($port === 0 && $options->get('pid-file') === null && $options->get('mode') !== 'fpm') {
            // Port 0 picks a free port: the default runtime files are named after the port picked, so
            // that each such server has its own (one shared weft-0.pid made every `serve --port 0`
            // after the first "already running") and `bin/weft stop --port P` finds the port it printed.
            $host = $options->get('host');
            try {
                $listener = Listener::listen(
                    (\str_contains($host, ':') ? "[$host]" : $host) . ':0',
                    ListenOptions::defaults()->withBacklog($options->get('backlog')),
                );
            } catch (ListenException $e) {
                \fwrite(\STDERR, "weft: cannot listen on port 0: " . $e->getMessage() . "\n");
                return 1;
            }
            $port = $listener->port();
        }
        try {
            $pidFile = $options->get('pid-file') ?? RuntimeFiles::defaultPidFile($port);
            $logFile = $options->get('log-file') ?? ($options->get('daemon') ? RuntimeFiles::defaultLogFile($port) : null);
            self::checkPidFile(new PidFile($pidFile));
        } catch (UnsafePath|AlreadyRunning $e) {
            \fwrite(\STDERR, 'weft: ' . $e->getMessage() . "\n");
            return 1;
        }

        try {
            $logger = new Logger($logFile, $options->get('log-level'), $options->get('log-format'));
        } catch (\RuntimeException $e) {
            // An unsafe or unwritable log path stops the start with its reason, in every mode.
            \fwrite(\STDERR, 'weft: ' . $e->getMessage() . "\n");
            return 1;
        }

        if ($options->get('mode') === 'fpm') {
            return (new FpmCommand())->run($app, $options, $pidFile, $logFile);
        }
        foreach ($tls === null ? [] : $tls->check() as $line) {
            $logger->info('TLS certificate {line}', ['line' => $line]);
        }
        if ($tls !== null && !\function_exists('Weft\Ext\tlsShareTickets')) {
            $logger->info('TLS session resumption off: PHP alone builds a new SSL context, with its own ticket keys, for every connection; the native extension shares one key across the workers (bash scripts/build-ext.sh)');
        }

        if ($options->get('trusted-proxies') !== [] && $options->get('protocol') !== 'http') {
            throw new UsageError("option '--trusted-proxies' needs --protocol http");
        }
        $requestMetrics = new RequestMetrics();
        $accessLog = null;
        if ($options->get('access-log') !== null) {
            if ($options->get('protocol') !== 'http') {
                throw new UsageError("option '--access-log' needs --protocol http");
            }
            if ($options->get('access-log') === '-' && $options->get('daemon')) {
                // A daemon leaves its terminal: "-" would keep writing to the shell that started it.
                throw new UsageError("option '--access-log -' (stdout) cannot be used with --daemon: give a file");
            }
            try {
                // Opened here, in the master, so that an unsafe or unwritable path stops the start.
                $accessLog = new AccessLog($options->get('access-log'), $options->get('access-log-format'));
            } catch (\RuntimeException $e) {
                \fwrite(\STDERR, 'weft: ' . $e->getMessage() . "\n");
                return 1;
            }
        }
        try {
            $metricsServer = $options->get('metrics') !== null ? new MetricsServer($options->get('metrics'), $logger) : null;
        } catch (\InvalidArgumentException $e) {
            throw new UsageError($e->getMessage());
        }
        $masterHooks = \array_values(\array_filter([
            $metricsServer,
            SystemdNotifier::fromEnvironment($logger),
            self::watcher($app, $options, $logger),
        ]));

        $redirect = self::redirect($options, $logger, $accessLog);
        $config = new ServerConfig(
            handlerFactory: self::handlerFactory($app, $options, $logger, $requestMetrics, $accessLog),
            extraListeners: $redirect === null ? [] : [$redirect],
            host: $options->get('host'),
            port: $port,
            workers: $options->get('workers'),
            mode: $options->get('mode'),
            loop: $options->get('loop'),
            maxRequests: $options->get('max-requests'),
            maxConnections: $options->get('max-connections'),
            grace: $options->get('grace'),
            backlog: $options->get('backlog'),
            pidFile: $pidFile,
            logFile: $logFile,
            daemon: $options->get('daemon'),
            maxCoroutines: $options->get('max-coroutines'),
            maxRequestTime: $options->get('max-request-time'),
            workerTimeout: $options->get('worker-timeout'),
            masterHooks: $masterHooks,
            workerStats: $requestMetrics->snapshot(...),
            // Sync mode runs one request at a time: nothing to switch to, so nothing is hooked.
            hooks: $options->get('mode') === 'coroutine' ? $hooks : 0,
            memoryLimit: $options->get('memory-limit'),
            reopenAlso: $accessLog === null ? null : static function () use ($accessLog): string {
                $accessLog->reopen();
                return 'access log';
            },
            blockingThreshold: $options->get('blocking-threshold'),
            outputBudget: self::outputBudget($options->get('memory-limit')),
            tls: $tls,
        );
        $master = new Master($config, $logger);
        try {
            if ($listener === null) {
                $master->bind();
            } else {
                $master->adopt($listener);
            }
        } catch (ListenException $e) {
            \fwrite(\STDERR, "weft: cannot listen on port $port: " . $e->getMessage() . "\n");
            return 1;
        }
        try {
            // Bound before the fork too, so a busy port stops the start rather than logging later.
            $metricsServer?->bind();
        } catch (ListenException $e) {
            \fwrite(\STDERR, "weft: cannot listen for --metrics on {$options->get('metrics')}: " . $e->getMessage() . "\n");
            return 1;
        }
        try {
            if ($redirect !== null) {
                $logger->info('Plain HTTP on {address} redirects to HTTPS (--redirect-http)', ['address' => $redirect->bind()->address()]);
            }
        } catch (ListenException $e) {
            \fwrite(\STDERR, "weft: cannot listen for --redirect-http on {$options->get('redirect-http')}: " . $e->getMessage() . "\n");
            return 1;
        }
        if ($options->get('daemon')) {
            // Announced in the detached master: the first line of its log carries the pid of the rest.
            return Daemon::start($pidFile, $logFile, static function (\Closure $ready, \Closure $failed) use ($master, $config, $logger): int {
                WorkerHooks::announce($config->mode, $config->hooks, PhpRuntime::buildCommand(), $logger);
                return $master->run($ready, $failed);
            });
        }
        WorkerHooks::announce($config->mode, $config->hooks, PhpRuntime::buildCommand(), $logger);
        // With --access-log -, stdout is the access log's alone: a log shipper reading it must not meet
        // a READY line, so that goes to stderr with the server log.
        $readyTo = $options->get('access-log') === '-' ? \STDERR : \STDOUT;
        return $master->run(static function (string $address) use ($readyTo): void {
            // A line the tests and scripts wait for; the port is the real one when --port 0 was given.
            // Written to the descriptor, not echoed: under the CLI SAPI an echo marks the headers as
            // sent, and every worker forked after it (--max-requests, a reload, a crash) would start
            // so, its session_start() and header() failing.
            \fwrite($readyTo, 'READY ' . \substr($address, (int) \strrpos($address, ':') + 1) . "\n");
        });
    }

    /**
     * --tls-cert and its companions, checked here: a certificate that cannot be read or a key that does not
     * match stops the start with the reason (exit 1), before anything listens.
     */
    private static function tls(Options $options): ?\Weft\Socket\Tls\TlsConfig
    {
        if ($options->get('tls-cert') === []) {
            foreach (['tls-key' => [], 'tls-ciphers' => null, 'redirect-http' => null, 'hsts' => 0, 'hsts-subdomains' => false] as $name => $unset) {
                if ($options->get($name) !== $unset) {
                    throw new UsageError("option '--$name' needs --tls-cert");
                }
            }
            return null;
        }
        if ($options->get('hsts') < 0) {
            throw new UsageError("option '--hsts' cannot be negative");
        }
        if ($options->get('hsts-subdomains') && $options->get('hsts') === 0) {
            throw new UsageError("option '--hsts-subdomains' needs --hsts");
        }
        if (($options->get('redirect-http') !== null || $options->get('hsts') > 0) && $options->get('protocol') !== 'http') {
            throw new UsageError("options '--redirect-http' and '--hsts' need --protocol http");
        }
        if ($options->get('tls-handshake-timeout') <= 0) {
            throw new UsageError("option '--tls-handshake-timeout' must be positive");
        }
        try {
            $tls = \Weft\Socket\Tls\TlsConfig::fromOptions($options->get('tls-cert'), $options->get('tls-key'), $options->get('tls-handshake-timeout'), $options->get('tls-ciphers'),
                $options->get('http2') === 'on' && $options->get('protocol') === 'http' ? ['h2', 'http/1.1'] : ['http/1.1']);
        } catch (\InvalidArgumentException $e) {
            throw new UsageError($e->getMessage());
        }
        $tls->check();
        $tls->selfTest();
        return $tls;
    }

    /** --redirect-http: the plain-HTTP listener whose every answer sends the client to the HTTPS port. */
    private static function redirect(Options $options, Logger $logger, ?AccessLog $accessLog): ?\Weft\Server\ExtraListener
    {
        $address = $options->get('redirect-http');
        if ($address === null) {
            return null;
        }
        if (\preg_match('/^\d+$/', $address) === 1) {
            $host = $options->get('host');
            $address = (\str_contains($host, ':') ? "[$host]" : $host) . ':' . $address;
        } elseif (\preg_match('/^(\[[0-9a-fA-F:.]+\]|[^:\[\]]+):\d+$/', $address) !== 1) {
            throw new UsageError("option '--redirect-http' expects [HOST:]PORT, got '$address'");
        }
        $maxHeader = $options->get('max-header');
        $idleTimeout = $options->get('idle-timeout');
        return new \Weft\Server\ExtraListener($address, static function (int $httpsPort) use ($logger, $accessLog, $maxHeader, $idleTimeout): \Weft\Server\Protocol {
            $limits = (new Limits())->withMaxHeaderBytes($maxHeader)->withMaxTargetBytes($maxHeader);
            return new HttpProtocol(
                (new \Weft\Http\Tls\HttpsRedirect($httpsPort))(...),
                $logger,
                new HttpOptions(limits: $limits, idleTimeout: $idleTimeout),
                $accessLog,
            );
        }, $options->get('backlog'));
    }

    /**
     * --watch must never be on in production by accident (left in a config file, a WEFT_WATCH=1 in an
     * environment copied from a laptop): it is refused for a daemon, which is how production runs
     * without a supervisor, and when APP_ENV (Laravel's and Symfony's variable) says production, unless
     * --watch-force says it is meant.
     */
    private static function checkWatch(Options $options): void
    {
        if (!$options->get('watch')) {
            foreach (['watch-path', 'watch-force'] as $name) {
                if ($options->get($name) !== [] && $options->get($name) !== false) {
                    throw new UsageError("option '--$name' needs --watch");
                }
            }
            return;
        }
        if ($options->get('mode') === 'fpm') {
            throw new UsageError("option '--watch' is not available in fpm mode (php-fpm revalidates scripts itself)");
        }
        if ($options->get('watch-force')) {
            return;
        }
        if ($options->get('daemon')) {
            throw new UsageError("option '--watch' is for development and is refused with --daemon (add --watch-force if this is meant)");
        }
        $env = \strtolower((string) \getenv('APP_ENV'));
        if ($env === 'prod' || $env === 'production') {
            throw new UsageError("option '--watch' is for development and is refused with APP_ENV=$env (add --watch-force if this is meant)");
        }
    }

    private static function watcher(string $app, Options $options, Logger $logger): ?\Weft\Server\Watch\ReloadOnChange
    {
        if (!$options->get('watch')) {
            return null;
        }
        try {
            $list = \Weft\Server\Watch\WatchList::build($app, $options->get('watch-path'));
        } catch (\InvalidArgumentException $e) {
            throw new UsageError($e->getMessage());
        }
        $with = $options->get('watch-with');
        $source = null;
        if ($with !== 'polling' && \Weft\Server\Watch\InotifySource::available()) {
            $source = new \Weft\Server\Watch\InotifySource($list);
        } elseif ($with === 'inotify') {
            throw new UsageError("option '--watch-with inotify' needs the native extension (ext/modules/weft.so)");
        }
        return new \Weft\Server\Watch\ReloadOnChange(
            $source ?? new \Weft\Server\Watch\PollingSource($list),
            $logger,
            \dirname($app),
        );
    }

    /**
     * Unsent output a worker may hold, all its connections together: a quarter of --memory-limit (half
     * is the budget of requests being received, the rest the application's), never under a few
     * connections' own bound; without a memory limit, the default one's quarter.
     */
    public static function outputBudget(int $memoryLimit): int
    {
        return $memoryLimit > 0 ? \max(4 * \Weft\Server\Connection::HIGH_WATER, \intdiv($memoryLimit, 4)) : ServerConfig::DEFAULT_OUTPUT_BUDGET;
    }

    /**
     * A pid file naming a live Weft master means "already running"; anything else there (a stale pid, a
     * foreign process, garbage) is said and then replaced. A path we must not trust is refused.
     *
     * @throws UnsafePath|AlreadyRunning
     */
    private static function checkPidFile(PidFile $pidFile): void
    {
        RuntimeFiles::checkDirectoryOf($pidFile->path);
        $pid = $pidFile->read();
        if ($pid === null) {
            return;
        }
        $why = $pidFile->whyNotMaster($pid);
        if ($why === null) {
            throw new AlreadyRunning("Weft is already running with master pid $pid (pid file {$pidFile->path})");
        }
        \fwrite(\STDERR, "weft: ignoring the stale pid file {$pidFile->path}: $why\n");
    }

    /** @return \Closure(): \Weft\Server\Protocol */
    private static function handlerFactory(string $app, Options $options, Logger $logger, RequestMetrics $metrics, ?AccessLog $accessLog = null): \Closure
    {
        $protocol = $options->get('protocol');
        $maxLine = $options->get('max-line');
        [$static, $gzip] = self::layers($options);
        try {
            $limits = (new Limits())
                ->withMaxBodyBytes($options->get('max-body'))
                ->withMaxHeaderBytes($options->get('max-header'))
                ->withMaxTargetBytes($options->get('max-header'))
                ->withExtraMethods(\array_map('strtoupper', $options->get('extra-methods')));
        } catch (\InvalidArgumentException $e) {
            throw new UsageError($e->getMessage());
        }
        try {
            $proxies = $options->get('trusted-proxies') === [] ? null : new TrustedProxies($options->get('trusted-proxies'), $options->get('proxy-header'));
        } catch (\InvalidArgumentException $e) {
            throw new UsageError("option '--trusted-proxies': " . $e->getMessage());
        }
        $httpOptions = new HttpOptions(
            limits: $limits,
            headerTimeout: $options->get('header-timeout'),
            idleTimeout: $options->get('idle-timeout'),
            sendTimeout: $options->get('send-timeout'),
            debug: $options->get('debug'),
            bodyTimeout: $options->get('body-timeout'),
            upgrades: ['websocket' => self::webSocketOptions($options)],
            // Half the memory limit (at least one body of the largest size) for request bodies, the
            // rest for the application: clients together cannot push a worker over its limit.
            bodyMemory: $options->get('memory-limit') > 0 ? \max($options->get('max-body') + 65536, \intdiv($options->get('memory-limit'), 2)) : 0,
            // The other half, less what the application holds, for open WebSockets (worked out in the worker).
            upgradeMemory: $options->get('ws-memory') ?? HttpOptions::AUTO,
            trustedProxies: $proxies,
        );
        $sendTimeout = $options->get('send-timeout');
        $hsts = $options->get('hsts');
        $hstsSubdomains = $options->get('hsts-subdomains');
        $http2 = $options->get('http2') === 'on' ? [$options->get('http2-max-streams'), $options->get('http2-max-resets')] : null;
        return static function () use ($sendTimeout, $app, $protocol, $maxLine, $httpOptions, $logger, $metrics, $static, $gzip, $accessLog, $hsts, $hstsSubdomains, $http2) {
            // In the worker, after fork (Worker::prepare() has set its limits and logs): the code as it is on disk now.
            AppLoader::forgetChangedScripts();
            $loop = \Weft\Loop\Loop::get();
            $accessLog?->afterFork();
            $application = \Weft\Mode\HttpLayers::wrap(AppLoader::load($app), $static, $gzip);
            if ($hsts > 0 && $protocol === 'http') {
                $application = (new \Weft\Http\Tls\Hsts($application, $hsts, $hstsSubdomains))(...);
            }
            $metrics->watchLoop($loop);
            if ($protocol === 'line') {
                if (!$application instanceof \Closure) {
                    throw new \Weft\Mode\AppError('A line-protocol application must return a closure fn (string $line, Connection $c): ?string');
                }
                return new LineProtocol($application, $logger, $maxLine, sendTimeout: $sendTimeout);
            }
            $http = new HttpProtocol($application, $logger, $httpOptions, $accessLog, $metrics);
            if ($http2 !== null) {
                $http->http2 = new \Weft\Http2\Http2Protocol($http, maxConcurrentStreams: $http2[0], maxResets: $http2[1]);
            }
            return $http;
        };
    }

    private static function webSocketOptions(Options $options): \Weft\WebSocket\WebSocketOptions
    {
        try {
            return new \Weft\WebSocket\WebSocketOptions(
                maxMessage: $options->get('ws-max-message'),
                idleTimeout: $options->get('ws-idle-timeout'),
                sendTimeout: $options->get('send-timeout'),
            );
        } catch (\InvalidArgumentException $e) {
            throw new UsageError($e->getMessage());
        }
    }

    /**
     * The document root and gzip settings, checked here in the master so that a bad directory or
     * type list stops the start with a clear reason instead of failing in every worker.
     *
     * @return array{0: ?StaticOptions, 1: ?GzipOptions}
     */
    private static function layers(Options $options): array
    {
        try {
            $static = $options->get('static') === null ? null : new StaticOptions(
                $options->get('static'),
                followSymlinks: $options->get('static-symlinks'),
                dotfiles: $options->get('static-dotfiles'),
            );
            $gzip = $options->get('gzip') === 'off' || $options->get('protocol') !== 'http' ? null : new GzipOptions(
                $options->get('gzip-min-length'),
                $options->get('gzip-types'),
                $options->get('gzip-level'),
            );
        } catch (\InvalidArgumentException $e) {
            throw new UsageError($e->getMessage());
        }
        if ($static !== null && $options->get('protocol') !== 'http') {
            throw new UsageError("option '--static' needs --protocol http");
        }
        return [$static, $gzip];
    }

    /** The CPUs this process may run on (affinity and cgroup quota), not the machine's: see AvailableCpus. */
    public static function cpus(): int
    {
        return AvailableCpus::count();
    }
}
