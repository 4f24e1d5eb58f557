<?php

declare(strict_types=1);

// The Docker image's HEALTHCHECK: exit 0 when the server is healthy, 1 (with the reason) when not.
// With WEFT_METRICS (the image sets 127.0.0.1:9100) it asks the master's GET /health, which is 200 only
// when every configured worker is ready, and 503 while workers start, are stuck or missing, or while the
// server stops. Without it, it only checks that the application port accepts a connection. No curl
// in the image: PHP's own HTTP client, with a short timeout (Docker's --timeout kills it anyway).

$local = static function (string $address): string {
    // The server may listen on every interface; the check runs inside the container: ask loopback.
    return (string) preg_replace(['/^0\.0\.0\.0:/', '/^\[::\]:/', '/^:/'], ['127.0.0.1:', '[::1]:', '127.0.0.1:'], $address);
};
$metrics = trim((string) getenv('WEFT_METRICS'));
if ($metrics !== '' && $metrics !== 'off') {
    $url = 'http://' . $local($metrics) . '/health';
    $context = stream_context_create(['http' => ['timeout' => 3, 'ignore_errors' => true]]);
    $body = @file_get_contents($url, false, $context);
    if ($body === false) {
        fwrite(STDERR, "unhealthy: no answer from $url\n");
        exit(1);
    }
    $status = isset($http_response_header[0]) && preg_match('#^HTTP/\S+ (\d{3})#', $http_response_header[0], $m) ? (int) $m[1] : 0;
    if ($status !== 200) {
        fwrite(STDERR, "unhealthy: $url answered $status: " . trim($body) . "\n");
        exit(1);
    }
    exit(0);
}
$address = $local((getenv('WEFT_HOST') ?: '127.0.0.1') . ':' . (getenv('WEFT_PORT') ?: '8080'));
$socket = @stream_socket_client("tcp://$address", $errno, $error, 3);
if ($socket === false) {
    fwrite(STDERR, "unhealthy: cannot connect to $address: $error\n");
    exit(1);
}
fclose($socket);
exit(0);
