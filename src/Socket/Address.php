<?php

declare(strict_types=1);

namespace Weft\Socket;

/** @internal Normalises "host:port", "tcp://host:port", "[::1]:port" and "unix:///path" to stream URIs. */
final class Address
{
    public static function normalize(string $address): string
    {
        if (\str_starts_with($address, 'unix://') || \str_starts_with($address, 'tcp://')) {
            return $address;
        }
        if (\str_starts_with($address, '/')) {
            return 'unix://' . $address;
        }
        if (!\preg_match('/^(\[[0-9a-fA-F:.]+\]|[^:\[\]\/]+):(\d{1,5})$/', $address)) {
            throw new \InvalidArgumentException(
                "Invalid socket address '$address' (expected host:port, [ipv6]:port, tcp://... or unix:///path)",
            );
        }
        return 'tcp://' . $address;
    }

    public static function isUnix(string $uri): bool
    {
        return \str_starts_with($uri, 'unix://');
    }
}
