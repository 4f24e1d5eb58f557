<?php

declare(strict_types=1);

namespace Weft\Http\Psr;

use Psr\Http\Message\ServerRequestInterface;
use Psr\Http\Message\StreamInterface;
use Psr\Http\Message\UploadedFileInterface;
use Psr\Http\Message\UriInterface;
use Weft\Http\Message\BadRequest;
use Weft\Http\Message\Request;

/**
 * A PSR-7 server request whose parsed body and uploaded files are decoded from the Weft request
 * when first asked for, not before the application runs.
 *
 * So an undecodable JSON or form body reaches the application: getParsedBody() (or
 * getUploadedFiles()) throws Weft\Http\Message\BadRequest where the application asks, and a
 * middleware can catch it and answer in its own format, with its own request id. Uncaught, the
 * server turns it into the default 400. Once withParsedBody() / withUploadedFiles() has set a
 * value (a body-parsing middleware), that value is returned as PSR-7 specifies.
 *
 * Everything else is the wrapped nyholm request; with*() returns a wrapper around its copy.
 *
 * @internal built by PsrBridge
 */
final class LazyBodyServerRequest implements ServerRequestInterface
{
    private bool $parsedBodySet = false;
    private bool $filesSet = false;

    public function __construct(
        private ServerRequestInterface $inner,
        private readonly Request $request,
        private readonly PsrBridge $bridge,
    ) {
    }

    /** @throws BadRequest when the form or JSON body cannot be decoded */
    public function getParsedBody(): mixed
    {
        if (!$this->parsedBodySet) {
            $this->inner = $this->inner->withParsedBody($this->bridge->parsedBody($this->request));
            $this->parsedBodySet = true;
        }
        return $this->inner->getParsedBody();
    }

    public function withParsedBody($data): static
    {
        $clone = $this->with($this->inner->withParsedBody($data));
        $clone->parsedBodySet = true;
        return $clone;
    }

    /** @throws BadRequest when a multipart body cannot be decoded */
    public function getUploadedFiles(): array
    {
        if (!$this->filesSet) {
            $this->inner = $this->inner->withUploadedFiles($this->bridge->uploadedFilesOf($this->request));
            $this->filesSet = true;
        }
        return $this->inner->getUploadedFiles();
    }

    /** @param array<array-key, UploadedFileInterface|array<array-key, mixed>> $uploadedFiles */
    public function withUploadedFiles(array $uploadedFiles): static
    {
        $clone = $this->with($this->inner->withUploadedFiles($uploadedFiles));
        $clone->filesSet = true;
        return $clone;
    }

    public function getServerParams(): array
    {
        return $this->inner->getServerParams();
    }

    public function getCookieParams(): array
    {
        return $this->inner->getCookieParams();
    }

    public function withCookieParams(array $cookies): static
    {
        return $this->with($this->inner->withCookieParams($cookies));
    }

    public function getQueryParams(): array
    {
        return $this->inner->getQueryParams();
    }

    public function withQueryParams(array $query): static
    {
        return $this->with($this->inner->withQueryParams($query));
    }

    public function getAttributes(): array
    {
        return $this->inner->getAttributes();
    }

    public function getAttribute(string $name, $default = null): mixed
    {
        return $this->inner->getAttribute($name, $default);
    }

    public function withAttribute(string $name, $value): static
    {
        return $this->with($this->inner->withAttribute($name, $value));
    }

    public function withoutAttribute(string $name): static
    {
        return $this->with($this->inner->withoutAttribute($name));
    }

    public function getRequestTarget(): string
    {
        return $this->inner->getRequestTarget();
    }

    public function withRequestTarget(string $requestTarget): static
    {
        return $this->with($this->inner->withRequestTarget($requestTarget));
    }

    public function getMethod(): string
    {
        return $this->inner->getMethod();
    }

    public function withMethod(string $method): static
    {
        return $this->with($this->inner->withMethod($method));
    }

    public function getUri(): UriInterface
    {
        return $this->inner->getUri();
    }

    public function withUri(UriInterface $uri, bool $preserveHost = false): static
    {
        return $this->with($this->inner->withUri($uri, $preserveHost));
    }

    public function getProtocolVersion(): string
    {
        return $this->inner->getProtocolVersion();
    }

    public function withProtocolVersion(string $version): static
    {
        return $this->with($this->inner->withProtocolVersion($version));
    }

    public function getHeaders(): array
    {
        return $this->inner->getHeaders();
    }

    public function hasHeader(string $name): bool
    {
        return $this->inner->hasHeader($name);
    }

    public function getHeader(string $name): array
    {
        return $this->inner->getHeader($name);
    }

    public function getHeaderLine(string $name): string
    {
        return $this->inner->getHeaderLine($name);
    }

    public function withHeader(string $name, $value): static
    {
        return $this->with($this->inner->withHeader($name, $value));
    }

    public function withAddedHeader(string $name, $value): static
    {
        return $this->with($this->inner->withAddedHeader($name, $value));
    }

    public function withoutHeader(string $name): static
    {
        return $this->with($this->inner->withoutHeader($name));
    }

    public function getBody(): StreamInterface
    {
        return $this->inner->getBody();
    }

    public function withBody(StreamInterface $body): static
    {
        return $this->with($this->inner->withBody($body));
    }

    private function with(ServerRequestInterface $inner): static
    {
        $clone = clone $this;
        $clone->inner = $inner;
        return $clone;
    }
}
