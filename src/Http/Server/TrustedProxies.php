<?php

declare(strict_types=1);

namespace Weft\Http\Server;

use Weft\Http\Message\Request;

/**
 * --trusted-proxies: the client's address and scheme as a trusted reverse proxy reports them, resolved
 * as nginx's real_ip does with `real_ip_recursive on`.
 *
 * Only a request whose peer (the TCP connection's other end) is in a trusted range is looked at; from
 * any other peer the forwarding fields are ignored, whatever they say. The chain of addresses in the
 * one header the operator chose (--proxy-header: X-Forwarded-For, or RFC 7239 Forwarded; never both,
 * so a client cannot slip in the kind the proxy passes through untouched) is walked from the right, the
 * end our peer wrote: each trusted address is a proxy that forwarded the request, and the first
 * untrusted one is the client. Entries further left were written by the client itself and are never
 * read. When every entry is trusted, the leftmost is the client.
 *
 * The scheme: with Forwarded, proto= of the element that named the client (written by the proxy that
 * received the client's connection). With X-Forwarded-For, X-Forwarded-Proto: one value is the one
 * the nearest proxy set; a list is read aligned from the right with X-Forwarded-For (each proxy
 * appends to both), the leftmost value when it is shorter than the part walked. "https" (or "wss")
 * gives https; anything else http.
 *
 * "unknown" and obfuscated identifiers ("_hidden", RFC 7239 §6.3), or a Forwarded element without
 * for=, end the walk: a proxy deliberately hid the address before it, so the client is the nearest
 * address known (the last one walked, or the peer).
 *
 * Bad input never guesses: an entry that is not an address (in the part walked), broken Forwarded
 * syntax (an unclosed quoted string anywhere, a bad pair, a repeated parameter, an IPv6 address
 * without brackets), or more than MAX_HOPS entries walked without meeting the client leaves the
 * request as it came: client = peer, scheme http.
 *
 * X-Forwarded-Host and X-Forwarded-Port are not read: the proxy passes Host on (nginx:
 * `proxy_set_header Host $host`), which is what every other layer already reads.
 */
final class TrustedProxies
{
    public const X_FORWARDED_FOR = 'x-forwarded-for';
    public const FORWARDED = 'forwarded';
    public const HEADERS = [self::X_FORWARDED_FOR, self::FORWARDED];
    /** Entries of a chain walked at most: a longer chain of trusted proxies is not a real deployment. */
    public const MAX_HOPS = 16;
    /** Named sets of ranges, usable in the list as any range. */
    public const KEYWORDS = [
        'loopback' => ['127.0.0.0/8', '::1/128'],
        // RFC 1918, loopback, and IPv6 unique local addresses (RFC 4193).
        'private' => ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '127.0.0.0/8', '::1/128', 'fc00::/7'],
    ];
    private const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]++";
    private const QUOTED = '"(?:[^"\\\\]++|\\\\.)*+"';

    /** @var list<array{0: string, 1: int, 2: int, 3: int}> packed network (4 or 16 bytes), its length, whole bytes of the prefix, mask of the partial byte */
    private array $ranges = [];

    /**
     * @param list<string> $ranges addresses ("10.0.0.5", "::1"), CIDR ranges ("10.0.0.0/8", "fd00::/8") or
     *        keywords (KEYWORDS); host bits under the prefix are ignored, as nginx does
     * @throws \InvalidArgumentException on an entry that is none of these, or an empty list
     */
    public function __construct(array $ranges, public readonly string $header = self::X_FORWARDED_FOR)
    {
        if (!\in_array($header, self::HEADERS, true)) {
            throw new \InvalidArgumentException("Unknown proxy header '$header' (x-forwarded-for or forwarded)");
        }
        foreach ($ranges as $range) {
            $range = \trim($range);
            foreach (self::KEYWORDS[\strtolower($range)] ?? [$range] as $cidr) {
                $this->ranges[] = self::range($cidr);
            }
        }
        if ($this->ranges === []) {
            throw new \InvalidArgumentException('No trusted proxy range given');
        }
    }

    /** Whether $address (an IP address in any textual form; IPv4-mapped IPv6 counts as IPv4) is in a trusted range. */
    public function trusts(string $address): bool
    {
        $packed = self::pack($address);
        return $packed !== null && $this->contains($packed);
    }

    /**
     * The request as its client sent it: the same object when its peer is not trusted or the proxy
     * named no one; otherwise a copy whose remoteAddress() is the client, scheme() the client's scheme
     * and peerAddress() the proxy.
     */
    public function resolve(Request $request): Request
    {
        $peer = $request->remoteAddress();
        if ($peer === null || !$this->trusts($peer)) {
            return $request;
        }
        return $this->resolveFromTrustedPeer($request);
    }

    /**
     * resolve() for a request whose peer the caller already found trusted (trusts()): the server asks
     * once per connection, not once per request.
     */
    public function resolveFromTrustedPeer(Request $request): Request
    {
        $peer = (string) $request->remoteAddress();
        $resolved = $this->header === self::FORWARDED ? $this->fromForwarded($request) : $this->fromXForwardedFor($request);
        if ($resolved === null || ($resolved[0] === null && $resolved[1] === 'http')) {
            return $request;
        }
        return $request->withForwardedClient($resolved[0] ?? $peer, $resolved[1]);
    }

    /** @return array{0: string|null, 1: string}|null the client (null: the peer) and scheme; null when the fields are unusable */
    private function fromXForwardedFor(Request $request): ?array
    {
        $client = null;
        $walked = 0;
        $chain = $request->header('x-forwarded-for');
        if ($chain !== null) {
            $entries = \explode(',', $chain);
            for ($i = \count($entries) - 1; $i >= 0; $i--) {
                $entry = \trim($entries[$i], " \t");
                if ($entry === '') {
                    continue; // an empty list element, which RFC 9110 §5.6.1 says to ignore
                }
                if (++$walked > self::MAX_HOPS) {
                    return null;
                }
                if (\strcasecmp($entry, 'unknown') === 0 || \preg_match('/^_[A-Za-z0-9._-]++$/', $entry) === 1) {
                    break; // hidden: the client is the address walked before it
                }
                $address = self::stripPort($entry) ?? '';
                $packed = self::pack($address);
                if ($packed === null) {
                    return null;
                }
                // inet_pton() takes IPv4 only in its one dotted-decimal spelling: such an entry is canonical already.
                $client = \strlen($packed) === 4 && !\str_contains($address, ':') ? $address : self::unpack($packed);
                if (!$this->contains($packed)) {
                    break;
                }
            }
        }
        return [$client, self::xForwardedProto($request->header('x-forwarded-proto'), \max(1, $walked))];
    }

    /** The scheme X-Forwarded-Proto gives the client $fromRight entries from the right of X-Forwarded-For. */
    private static function xForwardedProto(?string $field, int $fromRight): string
    {
        if ($field === null) {
            return 'http';
        }
        if (!\str_contains($field, ',')) {
            return self::scheme(\trim($field, " \t"));
        }
        $values = \array_values(\array_filter(\array_map(static fn (string $v): string => \trim($v, " \t"), \explode(',', $field)), static fn (string $v): bool => $v !== ''));
        if ($values === []) {
            return 'http';
        }
        return self::scheme($values[\max(0, \count($values) - $fromRight)]);
    }

    /** @return array{0: string|null, 1: string}|null the client (null: the peer) and scheme; null when the field is unusable */
    private function fromForwarded(Request $request): ?array
    {
        $field = $request->header('forwarded');
        if ($field === null) {
            return [null, 'http'];
        }
        $elements = self::elements($field);
        if ($elements === null) {
            return null;
        }
        $client = null;
        $scheme = 'http';
        $walked = 0;
        for ($i = \count($elements) - 1; $i >= 0; $i--) {
            $element = \trim($elements[$i], " \t");
            if ($element === '') {
                continue;
            }
            if (++$walked > self::MAX_HOPS) {
                return null;
            }
            $pairs = self::pairs($element);
            if ($pairs === null) {
                return null;
            }
            $proto = $pairs['proto'] ?? null;
            if ($proto !== null && \preg_match('/^[A-Za-z][A-Za-z0-9+.-]*$/', $proto) !== 1) {
                return null; // RFC 7239 §5.4: a URI scheme name
            }
            $scheme = $proto === null ? 'http' : self::scheme($proto);
            $node = self::node($pairs['for'] ?? 'unknown');
            if ($node === null) {
                return null;
            }
            if ($node === '') {
                break; // hidden: the client is the address walked before it
            }
            $packed = (string) self::pack($node);
            $client = self::unpack($packed);
            if (!$this->contains($packed)) {
                break;
            }
        }
        return [$client, $scheme];
    }

    /**
     * A Forwarded field split into its elements at the commas outside quoted strings; null when a
     * quoted string does not end (then no element boundary can be trusted).
     *
     * @return list<string>|null
     */
    private static function elements(string $field): ?array
    {
        $elements = [];
        $start = 0;
        $i = 0;
        $length = \strlen($field);
        while (true) {
            $i += \strcspn($field, ',"', $i);
            if ($i >= $length) {
                $elements[] = \substr($field, $start);
                return $elements;
            }
            if ($field[$i] === ',') {
                $elements[] = \substr($field, $start, $i - $start);
                $start = ++$i;
                continue;
            }
            $i++; // into a quoted string: up to its closing quote, over backslash escapes
            while (true) {
                if ($i >= $length) {
                    return null;
                }
                $i += \strcspn($field, '"\\', $i);
                if ($i >= $length) {
                    return null;
                }
                if ($field[$i] === '\\') {
                    $i += 2;
                    continue;
                }
                $i++;
                break;
            }
        }
    }

    /**
     * One forwarded-element's pairs (RFC 7239 §4: token "=" token / quoted-string, separated by ";"),
     * names lowercased, values unquoted; null when it is not that or names a parameter twice.
     *
     * @return array<string, string>|null
     */
    private static function pairs(string $element): ?array
    {
        $pairs = [];
        $offset = 0;
        $length = \strlen($element);
        while ($offset < $length) {
            if (\preg_match('/\G[ \t]*+(?:;|(' . self::TOKEN . ')=(' . self::TOKEN . '|' . self::QUOTED . ')[ \t]*+(?:;|\z))/', $element, $m, 0, $offset) !== 1) {
                return null;
            }
            $offset += \strlen($m[0]);
            if (!isset($m[1])) {
                continue; // an empty pair, which the grammar allows
            }
            $name = \strtolower($m[1]);
            if (isset($pairs[$name])) {
                return null; // RFC 7239 §4: a parameter MUST NOT occur more than once per element
            }
            $value = $m[2];
            if ($value[0] === '"') {
                $value = (string) \preg_replace('/\\\\(.)/s', '$1', \substr($value, 1, -1));
            }
            $pairs[$name] = $value;
        }
        return $pairs;
    }

    /**
     * A for= node (RFC 7239 §6): the address without its port; "" for "unknown" and obfuscated
     * identifiers; null when it is none of these (an IPv6 address must be in brackets there).
     */
    private static function node(string $node): ?string
    {
        $port = '(?::(?:[0-9]{1,5}|_[A-Za-z0-9._-]++))?';
        if (\strcasecmp($node, 'unknown') === 0 || \preg_match('/^_[A-Za-z0-9._-]++$/', $node) === 1) {
            return '';
        }
        if (\preg_match('/^\[([0-9A-Fa-f:.]++)\]' . $port . '$/', $node, $m) === 1 && \str_contains($m[1], ':')) {
            return self::pack($m[1]) === null ? null : $m[1];
        }
        if (\preg_match('/^([0-9.]++)' . $port . '$/', $node, $m) === 1) {
            return self::pack($m[1]) === null ? null : $m[1];
        }
        return null;
    }

    /** An X-Forwarded-For entry without a port: "192.0.2.1", "192.0.2.1:4711", "2001:db8::1", "[2001:db8::1]:4711". */
    private static function stripPort(string $entry): ?string
    {
        if ($entry[0] === '[') {
            return \preg_match('/^\[([^\]]++)\](?::[0-9]{1,5})?$/', $entry, $m) === 1 ? $m[1] : null;
        }
        $colon = \strpos($entry, ':');
        if ($colon !== false && \strpos($entry, ':', $colon + 1) === false) {
            return \preg_match('/^([0-9.]++):[0-9]{1,5}$/', $entry, $m) === 1 ? $m[1] : null;
        }
        return $entry;
    }

    private static function scheme(string $proto): string
    {
        $proto = \strtolower($proto);
        return $proto === 'https' || $proto === 'wss' ? 'https' : 'http';
    }

    private function contains(string $packed): bool
    {
        $length = \strlen($packed);
        foreach ($this->ranges as [$network, $networkLength, $bytes, $mask]) {
            if ($networkLength === $length
                && \strncmp($packed, $network, $bytes) === 0
                && ($mask === 0 || (\ord($packed[$bytes]) & $mask) === \ord($network[$bytes]))) {
                return true;
            }
        }
        return false;
    }

    /** @return array{0: string, 1: int, 2: int, 3: int} */
    private static function range(string $cidr): array
    {
        $slash = \strpos($cidr, '/');
        $packed = self::pack($slash === false ? $cidr : \substr($cidr, 0, $slash));
        if ($packed === null) {
            throw new \InvalidArgumentException("'$cidr' is not an IP address, a CIDR range (10.0.0.0/8, fd00::/8) or one of: " . \implode(', ', \array_keys(self::KEYWORDS)));
        }
        $max = \strlen($packed) * 8;
        $bits = $max;
        if ($slash !== false) {
            $prefix = \substr($cidr, $slash + 1);
            if (\preg_match('/^[0-9]{1,3}$/', $prefix) !== 1 || (int) $prefix > $max) {
                throw new \InvalidArgumentException("'$cidr': the prefix length must be 0 to $max");
            }
            $bits = (int) $prefix;
        }
        $bytes = \intdiv($bits, 8);
        $mask = $bits % 8 === 0 ? 0 : (0xff << (8 - $bits % 8)) & 0xff;
        // An address given with host bits set (10.1.2.3/8) means its network, as nginx reads it.
        $network = \substr($packed, 0, $bytes) . ($mask === 0 ? '' : \chr(\ord($packed[$bytes]) & $mask));
        return [\str_pad($network, \strlen($packed), "\0"), \strlen($packed), $bytes, $mask];
    }

    /** 4 or 16 bytes; an IPv4-mapped IPv6 address (a dual-stack socket's peer) as its IPv4 address. */
    private static function pack(string $address): ?string
    {
        $packed = @\inet_pton($address);
        if ($packed === false) {
            return null;
        }
        if (\strlen($packed) === 16 && \str_starts_with($packed, "\0\0\0\0\0\0\0\0\0\0\xff\xff")) {
            return \substr($packed, 12);
        }
        return $packed;
    }

    private static function unpack(string $packed): string
    {
        return (string) \inet_ntop($packed);
    }
}
