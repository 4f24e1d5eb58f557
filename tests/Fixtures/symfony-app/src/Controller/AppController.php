<?php

declare(strict_types=1);

namespace App\Controller;

use App\Counter;
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
    ) {
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
