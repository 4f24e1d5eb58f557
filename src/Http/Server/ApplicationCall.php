<?php

declare(strict_types=1);

namespace Weft\Http\Server;

use Psr\Http\Server\RequestHandlerInterface;
use Psr\Log\LoggerInterface;
use Weft\Coroutine\Cancelled;
use Weft\Http\Message\BadRequest;
use Weft\Http\Message\ErrorResponse;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;
use Weft\Http\Psr\PsrHandlerAdapter;
use Weft\Server\CodeDeadline;
use Weft\Server\RequestTimeout;

/**
 * The one policy for calling an HTTP application, shared by the server and fpm mode's front controller:
 * a Response goes out as it is; anything else the handler returns is a 500; a body that cannot be decoded
 * (BadRequest) is a 400; a request cancelled by --max-request-time is a 504; any other exception is a
 * 500 and a log line (with the trace in the body only with --debug).
 */
final class ApplicationCall
{
    private readonly \Closure $application;

    /** @param \Closure(): LoggerInterface $logger asked for only when there is something to log */
    public function __construct(
        \Closure|RequestHandlerInterface $application,
        private readonly \Closure $logger,
        private readonly bool $debug = false,
    ) {
        $this->application = $application instanceof RequestHandlerInterface
            ? (new PsrHandlerAdapter($application))(...)
            : $application;
    }

    /** Never throws: every failure becomes the response it deserves. */
    public function respond(Request $request): Response
    {
        try {
            $response = ($this->application)($request);
            // The application's own code is over: --max-request-time no longer interrupts it (what
            // follows is the server's, and a logger's in the catch blocks below).
            CodeDeadline::leave();
            if ($response instanceof Response) {
                return $response;
            }
            throw new \UnexpectedValueException(\sprintf(
                'The application returned %s; expected a %s',
                \get_debug_type($response),
                Response::class,
            ));
        } catch (BadRequest $e) {
            CodeDeadline::leave();
            // The request's body could not be decoded (form, JSON, multipart): the client's fault.
            return ErrorResponse::badRequest($e->getMessage());
        } catch (Cancelled $e) {
            CodeDeadline::leave();
            // The server cancelled it because its client went away (an HTTP/2 stream reset): nobody
            // waits for this answer, and a client that resets streams by the thousand must not fill the log.
            ($this->logger)()->debug('{method} {target}: {message}', ['method' => $request->method(), 'target' => $request->target(), 'message' => $e->getMessage()]);
            return ErrorResponse::unavailable($e->getMessage());
        } catch (RequestTimeout $e) {
            CodeDeadline::leave();
            $this->log($request, $e);
            return ErrorResponse::gatewayTimeout();
        } catch (\Throwable $e) {
            CodeDeadline::leave();
            $this->log($request, $e);
            return $this->error($e);
        }
    }

    /** The 500 for a failure: the trace goes into the body only in debug mode. */
    public function error(?\Throwable $e = null): Response
    {
        return ErrorResponse::internal($e, $this->debug);
    }

    public function log(Request $request, \Throwable $e, string $message = '{method} {target}: {class}: {message}'): void
    {
        ($this->logger)()->error($message, [
            'method' => $request->method(), 'target' => $request->target(),
            'class' => $e::class, 'message' => $e->getMessage(), 'exception' => $e,
        ]);
    }
}
