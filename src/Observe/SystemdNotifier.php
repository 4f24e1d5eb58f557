<?php

declare(strict_types=1);

namespace Weft\Observe;

use Psr\Log\LoggerInterface;
use Weft\Server\MasterHook;

/**
 * sd_notify(3) for `Type=notify` units: systemd passes a unix datagram socket in $NOTIFY_SOCKET, and the
 * master sends READY=1 once every worker serves, RELOADING=1 ... READY=1 around a rolling reload, and
 * STOPPING=1 on stop, each with a STATUS= line `systemctl status` shows. Without $NOTIFY_SOCKET it is
 * not created at all.
 *
 * The variable is removed from the environment once read, so nothing the workers or the application
 * start believes it is the service's main process.
 */
final class SystemdNotifier implements MasterHook
{
    private ?\Closure $status = null;
    private ?string $watchdogTimer = null;

    /** @param float $watchdog seconds of WatchdogSec= (0: none) */
    private function __construct(private readonly string $socket, private readonly LoggerInterface $logger, private readonly float $watchdog = 0.0)
    {
    }

    public static function fromEnvironment(LoggerInterface $logger): ?self
    {
        $socket = \getenv('NOTIFY_SOCKET');
        if ($socket === false || $socket === '') {
            return null;
        }
        // WatchdogSec=: systemd sets WATCHDOG_USEC (and WATCHDOG_PID, which must be us).
        $usec = (int) \getenv('WATCHDOG_USEC');
        $watchdogPid = \getenv('WATCHDOG_PID');
        $watchdog = $usec > 0 && ($watchdogPid === false || (int) $watchdogPid === \getmypid()) ? $usec / 1e6 : 0.0;
        foreach (['NOTIFY_SOCKET', 'WATCHDOG_USEC', 'WATCHDOG_PID'] as $name) {
            \putenv($name);
            unset($_ENV[$name], $_SERVER[$name]);
        }
        return new self($socket, $logger, $watchdog);
    }

    public function start(\Closure $status): void
    {
        $this->status = $status;
        $this->send("MAINPID=" . \getmypid() . "\nSTATUS=Starting workers");
        if ($this->watchdog > 0) {
            // From the master's loop, at half the deadline: a master stuck anywhere stops the pings, and
            // systemd restarts the service.
            $driver = \Weft\Loop\Loop::get();
            $this->watchdogTimer = $driver->repeat($this->watchdog / 2, fn () => $this->send('WATCHDOG=1'));
            $driver->unreference($this->watchdogTimer);
        }
    }

    public function event(string $event): void
    {
        $workers = $this->status !== null ? (int) (($this->status)()['master']['workers'] ?? 0) : 0;
        match ($event) {
            MasterHook::READY => $this->send("READY=1\nSTATUS=Serving with $workers worker(s)"),
            MasterHook::RELOADING => $this->send("RELOADING=1\nMONOTONIC_USEC=" . \intdiv(\hrtime(true), 1000) . "\nSTATUS=Reloading: starting new workers"),
            MasterHook::RELOADED => $this->send("READY=1\nSTATUS=Serving with $workers worker(s)"),
            MasterHook::STOPPING => $this->send("STOPPING=1\nSTATUS=Stopping: draining in-flight requests"),
            default => null,
        };
    }

    public function workerExited(array $stats): void
    {
    }

    public function forked(): void
    {
    }

    public function stop(): void
    {
        if ($this->watchdogTimer !== null) {
            \Weft\Loop\Loop::get()->cancel($this->watchdogTimer);
            $this->watchdogTimer = null;
        }
    }

    /** One datagram; an abstract socket name ("@name") gets its leading NUL, as sd_notify does. */
    public function send(string $state): bool
    {
        $path = $this->socket[0] === '@' ? "\0" . \substr($this->socket, 1) : $this->socket;
        // A stream rather than ext-sockets: socket_sendto() rejects abstract names (EINVAL).
        $stream = @\stream_socket_client('udg://' . $path, $errno, $error, 1.0);
        $sent = $stream !== false && @\fwrite($stream, $state) === \strlen($state);
        if ($stream !== false) {
            \fclose($stream);
        }
        if (!$sent) {
            $this->logger->warning('sd_notify to {socket} failed: {state}', ['socket' => $this->socket, 'state' => \strtok($state, "\n")]);
        }
        return $sent;
    }
}
