<?php

declare(strict_types=1);

namespace Weft\Tests\Unit\Http\Server;

use PHPUnit\Framework\Attributes\DataProvider;
use PHPUnit\Framework\TestCase;
use Weft\Http\Message\HeaderBlock;
use Weft\Http\Message\Request;
use Weft\Http\Server\TrustedProxies;

final class TrustedProxiesTest extends TestCase
{
    /** @param array<string, string|list<string>> $headers */
    private static function request(array $headers, ?string $peer = '127.0.0.1'): Request
    {
        return new Request('GET', '/', HeaderBlock::fromArray(['Host' => 'example.com'] + $headers), '', '1.1', $peer);
    }

    /**
     * @param list<string> $ranges
     * @param array<string, string|list<string>> $headers
     * @return array{0: string|null, 1: string, 2: string|null} client, scheme, peer
     */
    private static function resolve(array $ranges, array $headers, ?string $peer = '127.0.0.1', string $header = TrustedProxies::X_FORWARDED_FOR): array
    {
        $request = (new TrustedProxies($ranges, $header))->resolve(self::request($headers, $peer));
        return [$request->remoteAddress(), $request->scheme(), $request->peerAddress()];
    }

    public function testATrustedPeerNamesTheClientAndTheScheme(): void
    {
        self::assertSame(['203.0.113.7', 'https', '127.0.0.1'], self::resolve(['127.0.0.1'], ['X-Forwarded-For' => '203.0.113.7', 'X-Forwarded-Proto' => 'https']));
        self::assertSame(['203.0.113.7', 'http', '127.0.0.1'], self::resolve(['127.0.0.1'], ['X-Forwarded-For' => '203.0.113.7', 'X-Forwarded-Proto' => 'http']));
    }

    public function testAnUntrustedPeerIsTheClientWhateverItSends(): void
    {
        // A client reaching Weft directly, posing as a proxy: nothing of it is read.
        $spoof = ['X-Forwarded-For' => '10.0.0.1', 'X-Forwarded-Proto' => 'https', 'Forwarded' => 'for=10.0.0.1;proto=https'];
        $request = self::request($spoof, '198.51.100.9');
        foreach (TrustedProxies::HEADERS as $header) {
            self::assertSame($request, (new TrustedProxies(['127.0.0.1/32', '10.0.0.0/8'], $header))->resolve($request), 'the very same object: nothing is copied');
        }
        self::assertSame(['198.51.100.9', 'http', '198.51.100.9'], self::resolve(['127.0.0.1/32'], $spoof, '198.51.100.9'));
    }

    public function testNoPeerAddressMeansNoTrust(): void
    {
        self::assertSame([null, 'http', null], self::resolve(['0.0.0.0/0', '::/0'], ['X-Forwarded-For' => '203.0.113.7'], null));
    }

    public function testTheChainIsWalkedFromTheRightAndAForgedLeftmostEntryIsNeverRead(): void
    {
        // The client sent "X-Forwarded-For: 1.2.3.4" itself; nginx appended its real address, then an
        // inner proxy (10.0.0.2) appended nginx's.
        $chain = ['X-Forwarded-For' => '1.2.3.4, 203.0.113.7, 10.0.0.2'];
        self::assertSame(['203.0.113.7', 'http', '127.0.0.1'], self::resolve(['127.0.0.1', '10.0.0.0/8'], $chain));
        // With only the nearest proxy trusted, the next hop is the client (nginx's real_ip does the same).
        self::assertSame(['10.0.0.2', 'http', '127.0.0.1'], self::resolve(['127.0.0.1'], $chain));
        // A forged entry that is itself in a trusted range is still left of the client: not read.
        self::assertSame(['203.0.113.7', 'http', '127.0.0.1'], self::resolve(['127.0.0.1', '10.0.0.0/8'], ['X-Forwarded-For' => '10.9.9.9, 203.0.113.7, 10.0.0.2']));
    }

    public function testEveryEntryTrustedGivesTheLeftmost(): void
    {
        self::assertSame(['10.0.0.1', 'http', '127.0.0.1'], self::resolve(['private'], ['X-Forwarded-For' => '10.0.0.1, 192.168.1.1']));
    }

    public function testRepeatedFieldsAreOneList(): void
    {
        self::assertSame(['203.0.113.7', 'http', '127.0.0.1'], self::resolve(['127.0.0.1', '10.0.0.0/8'], ['X-Forwarded-For' => ['1.2.3.4', '203.0.113.7', '10.0.0.2']]));
    }

    public function testEmptyListElementsAreSkipped(): void
    {
        self::assertSame(['203.0.113.7', 'http', '127.0.0.1'], self::resolve(['127.0.0.1'], ['X-Forwarded-For' => ' , 203.0.113.7 ,, ']));
    }

    public function testIpv6(): void
    {
        self::assertSame(['2001:db8::7', 'http', '::1'], self::resolve(['::1'], ['X-Forwarded-For' => '2001:DB8:0:0::7'], '::1'));
        self::assertSame(['2001:db8::7', 'https', 'fd00::5'], self::resolve(['fd00::/8'], ['X-Forwarded-For' => '2001:db8::7, fd12::1', 'X-Forwarded-Proto' => 'https'], 'fd00::5'));
        self::assertSame(['2001:db8::7', 'http', 'fd00::5'], self::resolve(['fd00::/8'], ['X-Forwarded-For' => '[2001:db8::7]:4711, fd12::1'], 'fd00::5'));
        // An IPv6 range never matches an IPv4 peer, nor the reverse.
        self::assertSame(['127.0.0.1', 'http', '127.0.0.1'], self::resolve(['::/0'], ['X-Forwarded-For' => '203.0.113.7']));
        self::assertSame(['::1', 'http', '::1'], self::resolve(['0.0.0.0/0'], ['X-Forwarded-For' => '203.0.113.7'], '::1'));
    }

    public function testAnIpv4MappedPeerIsItsIpv4Address(): void
    {
        // What a dual-stack socket (--host ::) reports for an IPv4 client.
        self::assertSame(['203.0.113.7', 'http', '::ffff:127.0.0.1'], self::resolve(['127.0.0.1'], ['X-Forwarded-For' => '203.0.113.7'], '::ffff:127.0.0.1'));
        self::assertSame(['203.0.113.7', 'http', '127.0.0.1'], self::resolve(['127.0.0.1'], ['X-Forwarded-For' => '::ffff:203.0.113.7']));
    }

    public function testPortsInXForwardedForAreDropped(): void
    {
        self::assertSame(['203.0.113.7', 'http', '127.0.0.1'], self::resolve(['127.0.0.1'], ['X-Forwarded-For' => '203.0.113.7:51234']));
    }

    public function testXForwardedProtoAlignsWithTheChainFromTheRight(): void
    {
        $trusted = ['127.0.0.1', '10.0.0.0/8'];
        // Each proxy appended to both: the client (second from the right) came over https.
        self::assertSame(['203.0.113.7', 'https', '127.0.0.1'], self::resolve($trusted, ['X-Forwarded-For' => '203.0.113.7, 10.0.0.2', 'X-Forwarded-Proto' => 'https, http']));
        // A forged value left of the client's is not read.
        self::assertSame(['203.0.113.7', 'http', '127.0.0.1'], self::resolve($trusted, ['X-Forwarded-For' => '6.6.6.6, 203.0.113.7, 10.0.0.2', 'X-Forwarded-Proto' => 'https, http, http']));
        // One value: what the nearest proxy set (nginx: proxy_set_header X-Forwarded-Proto $scheme).
        self::assertSame(['203.0.113.7', 'https', '127.0.0.1'], self::resolve($trusted, ['X-Forwarded-For' => '203.0.113.7, 10.0.0.2', 'X-Forwarded-Proto' => 'HTTPS']));
        // Without X-Forwarded-For the peer is the client, and the proxy may still say it spoke TLS.
        self::assertSame(['127.0.0.1', 'https', '127.0.0.1'], self::resolve($trusted, ['X-Forwarded-Proto' => 'https']));
        self::assertSame(['127.0.0.1', 'http', '127.0.0.1'], self::resolve($trusted, ['X-Forwarded-Proto' => 'gopher']));
    }

    public function testTheHeaderNotChosenIsIgnored(): void
    {
        // nginx passes a client's own Forwarded field on untouched while it writes X-Forwarded-For.
        self::assertSame(['203.0.113.7', 'http', '127.0.0.1'], self::resolve(['127.0.0.1'], ['X-Forwarded-For' => '203.0.113.7', 'Forwarded' => 'for=6.6.6.6;proto=https']));
        // And the other way round.
        self::assertSame(['203.0.113.7', 'http', '127.0.0.1'], self::resolve(['127.0.0.1'], ['Forwarded' => 'for=203.0.113.7', 'X-Forwarded-For' => '6.6.6.6', 'X-Forwarded-Proto' => 'https'], '127.0.0.1', TrustedProxies::FORWARDED));
    }

    /** @return iterable<string, array{0: array<string, string|list<string>>}> */
    public static function malformed(): iterable
    {
        yield 'garbage' => [['X-Forwarded-For' => 'garbage']];
        yield 'garbage right of the client' => [['X-Forwarded-For' => '203.0.113.7, not-an-ip']];
        yield 'bad IPv4' => [['X-Forwarded-For' => '203.0.113.256']];
        yield 'leading zeros' => [['X-Forwarded-For' => '203.0.113.07']];
        yield 'short IPv4' => [['X-Forwarded-For' => '203.0.113']];
        yield 'bad IPv6' => [['X-Forwarded-For' => '2001:db8:::1']];
        yield 'zone id' => [['X-Forwarded-For' => 'fe80::1%eth0']];
        yield 'CIDR' => [['X-Forwarded-For' => '203.0.113.0/24']];
        yield 'bad port' => [['X-Forwarded-For' => '203.0.113.7:http']];
        yield 'unclosed bracket' => [['X-Forwarded-For' => '[2001:db8::1']];
        yield 'space inside' => [['X-Forwarded-For' => '203.0.113 .7']];
        yield 'not an obfuscated identifier' => [['X-Forwarded-For' => '203.0.113.7, _a;b']];
        yield 'too many trusted hops' => [['X-Forwarded-For' => '203.0.113.7, ' . \implode(', ', \array_fill(0, TrustedProxies::MAX_HOPS, '10.0.0.1'))]];
        yield 'bad proto with garbage chain' => [['X-Forwarded-For' => '%00', 'X-Forwarded-Proto' => 'https']];
    }

    /** @param array<string, string|list<string>> $headers */
    #[DataProvider('malformed')]
    public function testMalformedXForwardedForLeavesThePeer(array $headers): void
    {
        $request = self::request($headers);
        self::assertSame($request, (new TrustedProxies(['127.0.0.1', '10.0.0.0/8']))->resolve($request));
    }

    public function testGarbageLeftOfTheClientIsTheClientsOwnAndHarmless(): void
    {
        // Only the part walked is read: a client cannot hide behind its proxy by sending junk.
        self::assertSame(['203.0.113.7', 'http', '127.0.0.1'], self::resolve(['127.0.0.1'], ['X-Forwarded-For' => 'junk, ;;;, 203.0.113.7']));
    }

    public function testTheLastHopWalkedMayBeTheMaximum(): void
    {
        $chain = '203.0.113.7, ' . \implode(', ', \array_fill(0, TrustedProxies::MAX_HOPS - 1, '10.0.0.1'));
        self::assertSame(['203.0.113.7', 'http', '127.0.0.1'], self::resolve(['127.0.0.1', '10.0.0.0/8'], ['X-Forwarded-For' => $chain]));
    }

    public function testHiddenHopsEndTheWalk(): void
    {
        self::assertSame(['10.0.0.2', 'http', '127.0.0.1'], self::resolve(['127.0.0.1', '10.0.0.0/8'], ['X-Forwarded-For' => '203.0.113.7, unknown, 10.0.0.2']));
        self::assertSame(['127.0.0.1', 'http', '127.0.0.1'], self::resolve(['127.0.0.1'], ['X-Forwarded-For' => '203.0.113.7, _hidden']));
    }

    public function testForwarded(): void
    {
        $forwarded = static fn (string $field, array $ranges = ['127.0.0.1', '10.0.0.0/8'], ?string $peer = '127.0.0.1'): array => self::resolve($ranges, ['Forwarded' => $field], $peer, TrustedProxies::FORWARDED);
        self::assertSame(['203.0.113.7', 'https', '127.0.0.1'], $forwarded('for=203.0.113.7;proto=https;by=127.0.0.1'));
        // Case-insensitive names, quoted values, a port, whitespace around elements and pairs.
        self::assertSame(['203.0.113.7', 'https', '127.0.0.1'], $forwarded('For="203.0.113.7:4711" ; Proto=HTTPS'));
        // IPv6 must be quoted and bracketed; a port may follow.
        self::assertSame(['2001:db8:cafe::17', 'https', '127.0.0.1'], $forwarded('for="[2001:db8:cafe::17]:4711";proto=https, for=10.0.0.2;proto=http'));
        self::assertSame(['2001:db8:cafe::17', 'http', '127.0.0.1'], $forwarded('for="[2001:db8:cafe::17]"'));
        // The scheme is the one of the element that named the client, not the nearest proxy's.
        self::assertSame(['203.0.113.7', 'https', '127.0.0.1'], $forwarded('for=203.0.113.7;proto=https, for=10.0.0.2;proto=http'));
        // Walked from the right: a forged leftmost element is not read, even a well-formed one.
        self::assertSame(['203.0.113.7', 'http', '127.0.0.1'], $forwarded('for=10.6.6.6;proto=https, for=203.0.113.7, for=10.0.0.2'));
        // A quoted string may hold commas and semicolons; an escaped quote stays in it.
        self::assertSame(['203.0.113.7', 'https', '127.0.0.1'], $forwarded('for=203.0.113.7;proto=https;host="a,b;c\"d", for=10.0.0.2'));
        // Repeated fields are one list.
        self::assertSame(['203.0.113.7', 'http', '127.0.0.1'], self::resolve(['127.0.0.1', '10.0.0.0/8'], ['Forwarded' => ['for=203.0.113.7', 'for=10.0.0.2']], '127.0.0.1', TrustedProxies::FORWARDED));
    }

    public function testForwardedObfuscatedAndUnknownNodesEndTheWalk(): void
    {
        $forwarded = static fn (string $field): array => self::resolve(['127.0.0.1', '10.0.0.0/8'], ['Forwarded' => $field], '127.0.0.1', TrustedProxies::FORWARDED);
        // The proxy hid its client: the nearest known address, with the scheme of the hidden element.
        self::assertSame(['10.0.0.2', 'https', '127.0.0.1'], $forwarded('for=203.0.113.7, for=_gazonk;proto=https, for=10.0.0.2'));
        self::assertSame(['10.0.0.2', 'http', '127.0.0.1'], $forwarded('for="_SEVKISEK", for=10.0.0.2'));
        self::assertSame(['127.0.0.1', 'https', '127.0.0.1'], $forwarded('for=unknown;proto=https'));
        // An element without for= names no one either.
        self::assertSame(['127.0.0.1', 'https', '127.0.0.1'], $forwarded('proto=https;by=10.0.0.1'));
        // An obfuscated port is fine.
        self::assertSame(['203.0.113.7', 'http', '127.0.0.1'], $forwarded('for="203.0.113.7:_port1"'));
    }

    /** @return iterable<string, array{0: string}> */
    public static function malformedForwarded(): iterable
    {
        yield 'unquoted IPv6' => ['for=2001:db8::1'];
        yield 'IPv6 without brackets' => ['for="2001:db8::1"'];
        yield 'unquoted port' => ['for=203.0.113.7:80'];
        yield 'unclosed quote' => ['for="203.0.113.7'];
        yield 'unclosed quote far left' => ['for="x, for=203.0.113.7'];
        yield 'no value' => ['for='];
        yield 'no equals' => ['for'];
        yield 'repeated parameter' => ['for=203.0.113.7;for=203.0.113.8'];
        yield 'bad address' => ['for=203.0.113.999'];
        yield 'bad obfuscated' => ['for="_a b"'];
        yield 'garbage' => ['%%%'];
        yield 'bad proto' => ['for=203.0.113.7;proto="ht tp"'];
        yield 'text after a quoted value' => ['for="203.0.113.7"x'];
        yield 'bad bracket content' => ['for="[203.0.113.7]"'];
        yield 'too many hops' => [\implode(', ', \array_fill(0, TrustedProxies::MAX_HOPS + 1, 'for=10.0.0.1'))];
    }

    #[DataProvider('malformedForwarded')]
    public function testMalformedForwardedLeavesThePeer(string $field): void
    {
        $request = self::request(['Forwarded' => $field]);
        self::assertSame($request, (new TrustedProxies(['127.0.0.1', '10.0.0.0/8'], TrustedProxies::FORWARDED))->resolve($request));
    }

    public function testRanges(): void
    {
        $proxies = new TrustedProxies(['10.1.2.3/8', '192.168.1.0/23', '2001:db8::/33', '198.51.100.1']);
        foreach (['10.0.0.0', '10.255.255.255', '192.168.0.1', '192.168.1.255', '2001:db8:7fff::1', '198.51.100.1', '::ffff:10.0.0.1'] as $in) {
            self::assertTrue($proxies->trusts($in), $in);
        }
        foreach (['11.0.0.0', '192.168.2.0', '2001:db8:8000::', '198.51.100.2', 'nonsense', ''] as $out) {
            self::assertFalse($proxies->trusts($out), $out);
        }
        $private = new TrustedProxies(['PRIVATE']);
        foreach (['10.1.1.1', '172.31.0.1', '192.168.9.9', '127.0.0.5', '::1', 'fd12:3456::1'] as $in) {
            self::assertTrue($private->trusts($in), $in);
        }
        foreach (['172.32.0.1', '8.8.8.8', '2001:db8::1', 'fe80::1'] as $out) {
            self::assertFalse($private->trusts($out), $out);
        }
        self::assertTrue((new TrustedProxies(['0.0.0.0/0']))->trusts('255.1.2.3'));
        self::assertTrue((new TrustedProxies(['loopback']))->trusts('::1'));
    }

    /** @return iterable<string, array{0: list<string>}> */
    public static function badRanges(): iterable
    {
        yield 'empty' => [[]];
        yield 'name' => [['proxy.example.com']];
        yield 'prefix too long' => [['10.0.0.0/33']];
        yield 'IPv6 prefix too long' => [['::/129']];
        yield 'negative prefix' => [['10.0.0.0/-1']];
        yield 'empty prefix' => [['10.0.0.0/']];
        yield 'unknown keyword' => [['public']];
    }

    /** @param list<string> $ranges */
    #[DataProvider('badRanges')]
    public function testBadRangesAreRefused(array $ranges): void
    {
        $this->expectException(\InvalidArgumentException::class);
        new TrustedProxies($ranges);
    }

    public function testUnknownHeaderIsRefused(): void
    {
        $this->expectException(\InvalidArgumentException::class);
        new TrustedProxies(['127.0.0.1'], 'x-real-ip');
    }
}
