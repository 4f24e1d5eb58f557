<?php

declare(strict_types=1);

namespace Weft\Mode\Fpm;

use Psr\Log\LoggerInterface;
use Weft\Http\Message\ErrorResponse;
use Weft\Http\Message\Response;
use Weft\Http\Server\ApplicationCall;
use Weft\Mode\AppLoader;
use Weft\Server\Logger;

/**
 * What php-fpm runs for every request (see front.php): load the application file, build the Request
 * from the SAPI, call the handler, send the Response back through the SAPI.
 *
 * Nothing survives between requests here — the app file is loaded afresh each time, and a static
 * cache in it lasts one request. That is the FPM model this mode exists to compare against.
 *
 * Parameters come from nginx as FastCGI params: WEFT_APP (the application file), WEFT_LOG (log
 * file; php-fpm's stderr when absent), WEFT_DEBUG (exception traces in 500 bodies), WEFT_PING
 * (readiness probe: load the app, answer "pong", never call the handler).
 */
final class FrontController
{
    /** What an application prints outside its response is logged, but not without bound. */
    private const MAX_PRINTED_LINES = 100;

    private readonly SapiEmitter $emitter;
    private ?LoggerInterface $logger = null;

    public function __construct(?SapiOutput $output = null, ?LoggerInterface $logger = null)
    {
        $this->emitter = new SapiEmitter($output);
        $this->logger = $logger;
    }

    /**
     * @param array<string, mixed> $server $_SERVER
     * @param \Closure(): string $body reads the request body; called only when there is one
     */
    public function handle(array $server, \Closure $body): void
    {
        $debug = ($server['WEFT_DEBUG'] ?? '') === '1';
        try {
            $application = AppLoader::load((string) ($server['WEFT_APP'] ?? \getenv('WEFT_APP') ?: ''));
        } catch (\Throwable $e) {
            $this->log($server, 'Cannot load the application: {class}: {message}', $e);
            $this->emitter->emit(ErrorResponse::internal($e, $debug));
            return;
        }
        if (isset($server['WEFT_PING'])) {
            $this->emitter->emit(new Response(200, ['Content-Type' => 'text/plain'], "pong\n"));
            return;
        }
        $length = (int) ($server['CONTENT_LENGTH'] ?? 0);
        $request = SapiRequestFactory::fromGlobals($server, $length > 0 ? $body() : '');
        $call = new ApplicationCall($application, fn (): LoggerInterface => $this->logger($server), $debug);
        \Weft\Server\ServerLog::install($this->logger($server));
        // What the application prints is not its response (as in the other modes, where it goes to
        // the worker's stdout): here it would go out ahead of the status and header fields.
        $level = \ob_get_level();
        \ob_start();
        try {
            $response = $call->respond($request);
        } finally {
            $printed = '';
            while (\ob_get_level() > $level) {
                $printed = \ob_get_clean() . $printed;
            }
            if ($printed !== '') {
                // As in the other modes, where the master logs a worker's stdout: one record per line.
                $lines = \explode("\n", \rtrim($printed, "\n"));
                foreach (\array_slice($lines, 0, self::MAX_PRINTED_LINES) as $line) {
                    $this->logger($server)->info('stdout: {line}', ['line' => \addcslashes(\rtrim($line, "\r"), "\0..\10\13..\37"), 'stream' => 'stdout']);
                }
                if (\count($lines) > self::MAX_PRINTED_LINES) {
                    $this->logger($server)->info('stdout: ({n} more lines)', ['n' => \count($lines) - self::MAX_PRINTED_LINES]);
                }
            }
        }
        $isHead = $request->method() === 'HEAD';
        try {
            $this->emitter->emit($response, $isHead);
        } catch (StreamFailed $e) {
            // The head is out: all that is left is to stop (nginx ends the chunked body).
            $this->log($server, '{method} {target}: {message}', $e->getPrevious() ?? $e, $e->getMessage());
        } catch (\Throwable $e) {
            // Invalid header fields: found before anything was sent.
            $this->log($server, '{method} {target}: the response could not be sent: {class}: {message}', $e);
            $this->emitter->emit(ErrorResponse::internal($e, $debug), $isHead);
        }
    }

    /** @param array<string, mixed> $server */
    private function logger(array $server): LoggerInterface
    {
        if ($this->logger === null) {
            // clear_env = no: the supervisor's WEFT_LOG_LEVEL / WEFT_LOG_FORMAT (serve's options) reach here.
            $logger = new Logger((string) ($server['WEFT_LOG'] ?? '') ?: 'php://stderr', \getenv('WEFT_LOG_LEVEL') ?: 'info', \getenv('WEFT_LOG_FORMAT') ?: 'text');
            $logger->setRole('fpm worker');
            $this->logger = $logger;
        }
        return $this->logger;
    }

    /** @param array<string, mixed> $server */
    private function log(array $server, string $message, \Throwable $e, ?string $text = null): void
    {
        try {
            $this->logger($server)->error($message, [
                'method' => $server['REQUEST_METHOD'] ?? '', 'target' => $server['REQUEST_URI'] ?? '',
                'class' => $e::class, 'message' => $text ?? $e->getMessage(), 'exception' => $e,
            ]);
        } catch (\Throwable) {
            \error_log('weft: ' . $e);
        }
    }
}
