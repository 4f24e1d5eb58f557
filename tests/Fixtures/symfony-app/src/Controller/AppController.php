<?php

declare(strict_types=1);

namespace App\Controller;

use App\Counter;
use Doctrine\DBAL\Connection;
use App\Registry;
use Symfony\Component\HttpFoundation\BinaryFileResponse;
use Symfony\Component\HttpFoundation\Cookie;
use Symfony\Component\HttpFoundation\JsonResponse;
use Symfony\Component\HttpFoundation\Request;
use Symfony\Component\HttpFoundation\Response;
use Symfony\Component\HttpFoundation\StreamedResponse;
use Symfony\Component\HttpKernel\Attribute\AsController;
use Symfony\Component\Routing\Attribute\Route;

#[AsController]
final class AppController
{
    public function __construct(
        private readonly Counter $counter,
        private readonly Registry $registry,
        private readonly string $projectDir,
        private readonly Connection $db,
    ) {
    }

    /** `bin/weft bench framework`: a route that waits 50 ms on MariaDB. */
    #[Route('/sleep', methods: ['GET'])]
    public function sleep(): Response
    {
        $this->db->executeQuery('SELECT SLEEP(0.05)');
        return new Response('ok', 200, ['Content-Type' => 'text/plain']);
    }

    /** `bin/weft bench framework`: the classic three-query endpoint (the `test` table the scenario seeds). */
    #[Route('/sql3', methods: ['GET'])]
    public function sql3(): JsonResponse
    {
        return new JsonResponse([
            'a' => $this->db->fetchAssociative('SELECT * FROM test WHERE id = ?', [1]),
            'b' => $this->db->fetchAssociative('SELECT * FROM test WHERE id = ?', [2]),
            'rows' => $this->db->fetchAllAssociative('SELECT * FROM test LIMIT 5'),
        ]);
    }

    /** A query that takes a while (through Doctrine DBAL): with the hooks on it suspends the request's coroutine meanwhile. */
    #[Route('/db-slow', methods: ['GET'])]
    public function dbSlow(Request $request): JsonResponse
    {
        $row = $this->db->fetchAssociative('select sleep(?) as slept, ? as v, connection_id() as connection', [(float) $request->query->get('wait', '0.2'), (string) $request->query->get('v')]);
        return new JsonResponse($row);
    }

    /**
     * Who the session says this client is, read after a short wait on the database so that requests of
     * other clients run in between: ?as=NAME logs the client in (the session holds the name); ?wait=S
     * waits S seconds instead (without ?as, the session starts only after that wait).
     */
    #[Route('/who', methods: ['GET'])]
    public function who(Request $request): JsonResponse
    {
        $session = $request->getSession();
        if ($request->query->has('as')) {
            $session->migrate(true);
            $session->set('user', (string) $request->query->get('as'));
        }
        $this->db->fetchOne('select sleep(?)', [$request->query->has('wait') ? (float) $request->query->get('wait') : random_int(0, 10) / 1000]);
        return new JsonResponse(['user' => $session->get('user'), 'session' => $session->getId()]);
    }

    /**
     * The concurrency probe: the request writes its own id into the places a request's state lives
     * (request attributes, locale, session, a service of its kernel, the superglobals, timezone,
     * C and intl locales, VarDumper's handler), waits on the database while the other requests run in
     * the same worker, then reads each back.
     */
    #[Route('/identity', methods: ['GET', 'POST'])]
    public function identity(Request $request, \Symfony\Component\HttpFoundation\RequestStack $stack): JsonResponse
    {
        $id = (string) $request->get('id');
        $odd = ((int) $id) % 2 === 1;
        $request->attributes->set('probe', $id);
        $request->setLocale("l$id");
        if ($request->query->has('session')) {
            $request->getSession()->set('probe', $id);
        }
        $this->registry->seen = [$id];
        date_default_timezone_set($odd ? 'Asia/Tokyo' : 'America/Lima');
        setlocale(LC_NUMERIC, $odd ? 'C.UTF-8' : 'C');
        \Locale::setDefault("i$id");
        $_SERVER['PROBE'] = $id;
        $dumped = null;
        \Symfony\Component\VarDumper\VarDumper::setHandler(static function (mixed $value) use (&$dumped, $id): void {
            $dumped = "$id:$value";
        });

        $db = $this->db->fetchAssociative('select connection_id() as connection, sleep(?) as slept', [(float) $request->get('wait', '0.2')]);

        \Symfony\Component\VarDumper\VarDumper::dump('x');
        return new JsonResponse([
            'id' => $id,
            'connection' => (int) $db['connection'],
            'attribute' => $stack->getMainRequest()?->attributes->get('probe'),
            'locale' => $stack->getCurrentRequest()?->getLocale(),
            'session' => $request->query->has('session') ? $request->getSession()->get('probe') : $id,
            'service' => $this->registry->seen[0] ?? null,
            'dump' => $dumped,
            'timezone' => date_default_timezone_get(),
            'numeric' => setlocale(LC_NUMERIC, '0'),
            'intl' => \Locale::getDefault(),
            'get' => $_GET['id'] ?? null,
            'post' => $_POST['id'] ?? null,
            'request_global' => $_REQUEST['id'] ?? null,
            'cookie_global' => $_COOKIE['client'] ?? null,
            'files' => $_FILES['doc']['name'] ?? null,
            'server' => $_SERVER['PROBE'] ?? null,
            'query_string' => $_SERVER['QUERY_STRING'] ?? null,
        ]);
    }

    #[Route('/', methods: ['GET', 'HEAD'])]
    #[Route('/after-response', methods: ['GET'])]
    #[Route('/terminate-fails', methods: ['GET', 'HEAD'])]
    public function hello(): Response
    {
        return new Response('Hello World', 200, ['Content-Type' => 'text/plain']);
    }

    #[Route('/json', methods: ['GET'])]
    public function json(Request $request): JsonResponse
    {
        return new JsonResponse(['framework' => 'symfony', 'query' => $request->query->all(), 'dotenv' => $_SERVER['FIXTURE_GREETING'] ?? null]);
    }

    #[Route('/echo', methods: ['POST'])]
    public function echo(Request $request): JsonResponse
    {
        $data = $request->getContentTypeFormat() === 'json' ? $request->toArray() : $request->request->all();
        return new JsonResponse([
            'length' => \strlen($request->getContent()),
            'sha1' => sha1($request->getContent()),
            'data' => $data,
            'files' => array_map(
                static fn ($file) => ['name' => $file->getClientOriginalName(), 'size' => $file->getSize(), 'valid' => $file->isValid(), 'sha1' => sha1_file($file->getPathname()), 'path' => $file->getPathname()],
                $request->files->all(),
            ),
        ]);
    }

    /** An upload kept: moved out of the temporary directory, as an application stores one. */
    #[Route('/upload', methods: ['POST'])]
    public function upload(Request $request): JsonResponse
    {
        $file = $request->files->get('doc');
        $temporary = $file->getPathname();
        $valid = $file->isValid();
        $kept = $file->move($this->projectDir . '/var/uploads', bin2hex(random_bytes(6)) . '-' . $file->getClientOriginalName());
        return new JsonResponse(['valid' => $valid, 'temporary' => $temporary, 'kept' => $kept->getPathname(), 'sha1' => sha1_file($kept->getPathname())]);
    }

    #[Route('/headers', methods: ['GET'])]
    public function headers(Request $request): JsonResponse
    {
        $response = new JsonResponse([
            'agent' => $request->headers->get('X-Agent'),
            'cookie' => $request->cookies->get('flavour'),
            'host' => $request->getHost(),
            'client_ip' => $request->getClientIp(),
            'secure' => $request->isSecure(),
            'forwarded_for' => $request->headers->get('X-Forwarded-For'),
            'method' => $request->getMethod(),
        ]);
        $response->headers->set('X-Answer', '42');
        $response->headers->setCookie(Cookie::create('visited', 'yes', path: '/'));
        return $response;
    }

    #[Route('/counter', methods: ['GET'])]
    public function counter(): JsonResponse
    {
        $this->counter->increment();
        return new JsonResponse(['count' => $this->counter->increment()]);
    }

    /**
     * What code that reads the superglobals sees (PHP-FPM's values for this request), and a write
     * into them that the next request must not see.
     */
    #[Route('/globals', methods: ['GET', 'POST', 'PUT'])]
    public function globals(): JsonResponse
    {
        $seen = [
            'get' => $_GET, 'post' => $_POST, 'cookie' => $_COOKIE, 'request' => $_REQUEST,
            'files' => array_map(static fn (array $file) => ['name' => $file['name'], 'size' => $file['size'], 'error' => $file['error'], 'exists' => is_file($file['tmp_name'])], $_FILES),
            'uri' => $_SERVER['REQUEST_URI'] ?? null, 'method' => $_SERVER['REQUEST_METHOD'] ?? null, 'leaked' => $_SERVER['HTTP_X_LEAKED'] ?? null,
            'timezone' => date_default_timezone_get(), 'numeric' => setlocale(LC_NUMERIC, '0'), 'intl' => class_exists(\Locale::class) ? \Locale::getDefault() : null,
        ];
        $_GET['leaked'] = $_POST['leaked'] = $_COOKIE['leaked'] = $_REQUEST['leaked'] = $_SERVER['HTTP_X_LEAKED'] = 'yes';
        // A user's timezone and number format, set for this request only.
        date_default_timezone_set('Asia/Tokyo');
        setlocale(LC_NUMERIC, 'C.UTF-8', 'C.utf8');
        if (class_exists(\Locale::class)) {
            \Locale::setDefault('fr_FR');
        }
        return new JsonResponse($seen);
    }

    /** A native PHP session (session_start() underneath): each client its own. */
    #[Route('/session', methods: ['GET'])]
    public function session(Request $request): JsonResponse
    {
        $session = $request->getSession();
        $before = $session->get('visitor');
        if ($request->query->has('visitor')) {
            $session->set('visitor', (string) $request->query->get('visitor'));
        }
        return new JsonResponse(['id' => $session->getId(), 'before' => $before]);
    }

    #[Route('/leak', methods: ['GET'])]
    public function leak(Request $request): JsonResponse
    {
        $this->registry->seen[] = (string) $request->query->get('id');
        Registry::$log[] = (string) $request->query->get('id');
        return new JsonResponse(['seen' => $this->registry->seen]);
    }

    /** 32 MB, more than the kernel's socket buffers hold: a client that leaves leaves mid-body. */
    #[Route('/big', methods: ['GET'])]
    public function big(): StreamedResponse
    {
        return new StreamedResponse(static function (): void {
            $chunk = str_repeat('x', 65536);
            for ($i = 0; $i < 512; $i++) {
                echo $chunk;
            }
        }, 200, ['Content-Type' => 'application/octet-stream']);
    }

    #[Route('/echoed', methods: ['GET'])]
    public function echoed(): Response
    {
        echo 'echoed ';
        return new Response('returned', 200, ['Content-Type' => 'text/plain']);
    }

    /** A blocking call (with the sleep hook off): what the blocking-call detector is for. */
    #[Route('/blocks', methods: ['GET'])]
    public function blocks(): Response
    {
        usleep(120_000);
        return new Response('Hello World', 200, ['Content-Type' => 'text/plain']);
    }

    /** exit() ends the request as under PHP-FPM: what was printed so far is the answer. */
    #[Route('/exit', methods: ['GET'])]
    public function exit(): Response
    {
        echo "printed before exit\n";
        exit;
    }

    #[Route('/fail', methods: ['GET'])]
    public function fail(): Response
    {
        throw new \RuntimeException('the fixture failed on purpose');
    }

    #[Route('/stream', methods: ['GET'])]
    public function stream(): StreamedResponse
    {
        return new StreamedResponse(static function (): void {
            for ($i = 0; $i < 5; $i++) {
                echo "line $i\n";
                flush();
            }
        }, 200, ['Content-Type' => 'text/plain']);
    }

    /** A file made for this request and deleted once sent (deleteFileAfterSend()): a generated export. */
    #[Route('/export', methods: ['GET', 'HEAD'])]
    public function export(Request $request): BinaryFileResponse
    {
        $path = sys_get_temp_dir() . '/weft-export-' . preg_replace('/[^a-z0-9]/', '', (string) $request->query->get('id')) . '.csv';
        file_put_contents($path, str_repeat("a,b,c\n", 1000));
        return (new BinaryFileResponse($path, 200, ['Content-Type' => 'text/csv']))->deleteFileAfterSend();
    }

    #[Route('/file', methods: ['GET', 'HEAD'])]
    public function file(): BinaryFileResponse
    {
        // 300,000 bytes made once, so the test knows what to expect without a binary in the repository.
        $path = $this->projectDir . '/var/data.bin';
        if (!is_file($path)) {
            @mkdir(\dirname($path), 0777, true);
            file_put_contents($path, str_repeat(implode('', array_map('chr', range(0, 255))), 1171) . str_repeat('w', 300000 - 256 * 1171));
        }
        return new BinaryFileResponse($path, 200, ['Content-Type' => 'application/octet-stream']);
    }
}
