<?php

declare(strict_types=1);

namespace Weft\Bench\Scenario;

/**
 * What `bin/weft bench app` loads: the user's application file, the requests (one or several paths, a
 * method, a body, headers, or the user's own wrk Lua script for a mix) and the latency the user can
 * accept (the p99 target of the recommendation).
 */
final class AppTarget
{
    public const DEFAULT_P99_MS = 100.0;

    /**
     * @param list<string> $paths request targets ("/", "/users/42?x=1"); the first is the one checked
     * @param array<string, string> $headers
     * @param array<string, string> $env environment variables for the server (e.g. DATABASE_URL)
     */
    public function __construct(
        public readonly string $app,
        public readonly array $paths = ['/'],
        public readonly string $method = 'GET',
        public readonly ?string $body = null,
        public readonly array $headers = [],
        public readonly ?string $script = null,
        public readonly float $p99Ms = self::DEFAULT_P99_MS,
        public readonly array $env = [],
    ) {
        if ($paths === []) {
            throw new \InvalidArgumentException('at least one request path is needed');
        }
        foreach ($paths as $path) {
            if (!\str_starts_with($path, '/') || \preg_match('/[\s\x00-\x1f]/', $path)) {
                throw new \InvalidArgumentException("a request path starts with / and has no spaces or control characters, got '$path'");
            }
        }
        if (!\preg_match('/^[A-Z]+$/', $method)) {
            throw new \InvalidArgumentException("a method is an upper-case token like GET or POST, got '$method'");
        }
        foreach ($headers as $name => $value) {
            if (!\preg_match('/^[!#$%&\'*+.^_`|~0-9A-Za-z-]+$/', $name) || \preg_match('/[\r\n\x00]/', $value)) {
                throw new \InvalidArgumentException("invalid header '$name: $value'");
            }
        }
        if ($p99Ms <= 0) {
            throw new \InvalidArgumentException('the p99 target must be positive');
        }
    }

    /** Whether wrk needs a Lua script to send these requests (several paths, another method, a body, headers). */
    public function needsScript(): bool
    {
        return \count($this->paths) > 1 || $this->method !== 'GET' || $this->body !== null || $this->headers !== [];
    }

    /**
     * A wrk script that cycles through the paths, each request with the method, headers and body given.
     * Lua long strings ([==[ ... ]==]) carry the values byte for byte.
     */
    public function wrkScript(): string
    {
        $quote = static function (string $text): string {
            $level = 0;
            while (\str_contains($text, ']' . \str_repeat('=', $level) . ']')) {
                $level++;
            }
            $eq = \str_repeat('=', $level);
            // A newline right after the opening bracket is dropped by Lua: add one so a leading newline survives.
            return "[" . $eq . "[\n" . $text . "]" . $eq . "]";
        };
        $lua = "-- Written by bin/weft bench app: cycles through the request paths given on its command line.\n";
        $lua .= 'local paths = { ' . \implode(', ', \array_map($quote, $this->paths)) . " }\n";
        $lua .= 'local method = ' . $quote($this->method) . "\n";
        $lua .= 'local body = ' . ($this->body === null ? 'nil' : $quote($this->body)) . "\n";
        $lua .= "local headers = {}\n";
        foreach ($this->headers as $name => $value) {
            // "headers[ [[" with the space: "[[[" would open a long string.
            $lua .= 'headers[ ' . $quote($name) . ' ] = ' . $quote($value) . "\n";
        }
        $lua .= <<<'LUA'
            local counter = 0

            request = function()
              counter = counter + 1
              return wrk.format(method, paths[((counter - 1) % #paths) + 1], headers, body)
            end

            LUA;
        return $lua;
    }

    /** @return array<string, mixed> */
    public function toArray(): array
    {
        return [
            'app' => $this->app,
            'paths' => $this->paths,
            'method' => $this->method,
            'body_bytes' => $this->body === null ? null : \strlen($this->body),
            // Names only, as in the report: a header value may be a token that a CI artefact must not keep.
            'headers' => \array_keys($this->headers),
            'script' => $this->script,
            'p99_target_ms' => $this->p99Ms,
        ];
    }
}
