<?php

declare(strict_types=1);

namespace Weft\Http\Psr;

use Psr\Http\Server\RequestHandlerInterface;
use Weft\Http\Message\Request;
use Weft\Http\Message\Response;

/** A PSR-15 handler as a Weft handler: callable(Request): Response. */
final class PsrHandlerAdapter
{
    private readonly PsrBridge $bridge;

    public function __construct(private readonly RequestHandlerInterface $handler, ?PsrBridge $bridge = null)
    {
        $this->bridge = $bridge ?? new PsrBridge();
    }

    public function __invoke(Request $request): Response
    {
        return $this->bridge->fromPsrResponse($this->handler->handle($this->bridge->toServerRequest($request)));
    }
}
