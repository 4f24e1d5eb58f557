<?php

declare(strict_types=1);

namespace Weft\Bench\Reference;

use Weft\Bench\Environment;
use Weft\Bench\Process\Service;

/**
 * The Java side of the classic "coroutine PHP vs Netty" comparison (hello and the 10 ms sleep):
 * NettyReference.java, compiled once against Debian's libnetty-java with the JDK of default-jdk-headless
 * (`scripts/setup.sh --with-java` installs both), and started like any other server of a row: pinned to
 * the server CPU, on 127.0.0.1, announcing its port with a READY line. Without Java the rows are skipped
 * with the reason.
 */
final class Netty
{
    /** The jars of libnetty-java the server needs, in /usr/share/java. */
    private const JARS = ['netty-common', 'netty-buffer', 'netty-transport', 'netty-codec', 'netty-codec-http', 'netty-handler', 'netty-resolver'];
    private const JAR_DIR = '/usr/share/java';
    public const SOURCE = __DIR__ . '/NettyReference.java';

    /** Why the Netty rows cannot run here, or null when they can. */
    public static function unavailable(): ?string
    {
        $missing = [];
        if (self::binary('java') === null || self::binary('javac') === null) {
            $missing[] = 'a JDK (Debian package default-jdk-headless' . (\getenv('JAVA_HOME') ? '; JAVA_HOME=' . \getenv('JAVA_HOME') . ' has no bin/java and bin/javac' : '') . ')';
        }
        foreach (self::JARS as $jar) {
            if (!\is_file(self::JAR_DIR . "/$jar.jar")) {
                $missing[] = 'Netty (Debian package libnetty-java)';
                break;
            }
        }
        return $missing === [] ? null : 'Java reference not installed: ' . \implode(' and ', $missing) . ' missing; `scripts/setup.sh --with-java` installs them';
    }

    public static function javaVersion(): ?string
    {
        $java = self::binary('java');
        if ($java === null) {
            return null;
        }
        $line = \strtok((string) @\shell_exec(\escapeshellarg($java) . ' -version 2>&1'), "\n");
        return $line === false ? null : \trim($line);
    }

    /**
     * Compiles the server once per source version into var/bench/netty/ and returns its class path.
     *
     * @throws \RuntimeException when javac fails
     */
    public static function classPath(string $root): string
    {
        $jars = \implode(':', \array_map(static fn (string $jar): string => self::JAR_DIR . "/$jar.jar", self::JARS));
        $dir = $root . '/var/bench/netty/' . \substr(\hash_file('sha256', self::SOURCE), 0, 12);
        if (!\is_file("$dir/NettyReference.class")) {
            if (!\is_dir($dir) && !@\mkdir($dir, 0o777, true) && !\is_dir($dir)) {
                throw new \RuntimeException("cannot create $dir");
            }
            $output = [];
            \exec(\sprintf('%s -d %s -cp %s %s 2>&1', \escapeshellarg((string) self::binary('javac')), \escapeshellarg($dir), \escapeshellarg($jars), \escapeshellarg(self::SOURCE)), $output, $code);
            if ($code !== 0) {
                throw new \RuntimeException('javac failed: ' . \implode(' / ', \array_slice($output, 0, 3)));
            }
        }
        return "$jars:$dir";
    }

    /**
     * Starts the reference server pinned to the server CPU.
     *
     * @param int $loopThreads Netty event-loop threads (the row's workers for hello)
     * @param int $sleepMs 0 for hello; otherwise each request blocks a pool thread this long
     * @param int $poolThreads the blocking pool's threads (the row's workers for sleep)
     */
    public static function start(Environment $env, int $loopThreads, int $sleepMs, int $poolThreads, string $name): Service
    {
        $command = [
            ...$env->serverPrefix(), (string) self::binary('java'), '-cp', self::classPath($env->root), 'NettyReference',
            (string) $env->port(), (string) $loopThreads, (string) $sleepMs, (string) $poolThreads,
        ];
        // The JVM takes a while to start and compile; 60 s covers a loaded machine.
        return Service::start($env->processes, $command, $env->logBase($name), null, 60.0);
    }

    /** java and javac: from $JAVA_HOME when it is set (the usual way to pick a JDK), else from the PATH. */
    private static function binary(string $name): ?string
    {
        $home = (string) \getenv('JAVA_HOME');
        $dirs = $home !== '' ? ["$home/bin"] : \array_unique([...\explode(':', (string) \getenv('PATH')), '/usr/bin', '/usr/local/bin']);
        foreach ($dirs as $dir) {
            if ($dir !== '' && \is_file("$dir/$name") && \is_executable("$dir/$name")) {
                return "$dir/$name";
            }
        }
        return null;
    }
}
