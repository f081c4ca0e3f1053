package dev.tern.conformance.bench;

import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.CommandResult;
import dev.tern.testkit.netns.NetnsHarness;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * {@code tern serve --http} where users meet it (goal: nginx's rate or better): the real command in Tern's namespace against nginx
 * (one worker process, as Tern serves from one stack thread: {@code --shards 1}, access log off) on the kernel pair, both serving the
 * same 1 KiB file, loaded by ApacheBench ({@code ab}) from the peer's namespace, offloads off, no loss
 * ({@link LossyPairs} at 0 %).
 *
 * <pre>
 *   keep-alive:  ab -k -n REQUESTS -c 8 http://198.18.0.2:8080/1k.bin    (HTTP/1.0 with keep-alive, as ab sends)
 *   new connection per request: ab -n REQUESTS/4 -c 8 ...
 * </pre>
 * Each server first answers a cold run ({@code REQUESTS/4} keep-alive requests right after it started, reported as
 * {@code http_rps_*_cold}: a JVM that has compiled nothing yet, as a user meets it), then is warmed up for
 * {@value #WARM_UP_SECONDS} s of load, both ways (not counted: Tern's thread needs its hot methods compiled by C2,
 * which on two cores took 15-25 s of load, while nginx has nothing to warm), then measured. Each measurement is
 * bounded (ab's own {@code -s} timeout and a wall-clock limit) and every process is ended by its PID afterwards. Keys:
 * {@code http_rps_{tern,nginx}_{keepalive,close,cold}}, {@code http_ratio_{keepalive,close,cold}} (the median of
 * per-round ratios), {@code http_failed_{tern,nginx}_{keepalive,close}} (requests ab counted as failed).
 */
final class HttpBenchmark {
    private static final int PORT = 8080;
    private static final int CONCURRENCY = Integer.getInteger("tern.bench.http.concurrency", 8);
    private static final int WARM_UP_SECONDS = Integer.getInteger("tern.bench.http.warmup", 40);
    private static final Pattern RPS = Pattern.compile("Requests per second:\\s+([0-9.]+)");
    private static final Pattern FAILED = Pattern.compile("Failed requests:\\s+([0-9]+)");

    private final LossyPairs pairs;
    private final int rounds;
    private final int requests;
    private final Path tern;

    HttpBenchmark(LossyPairs pairs, int rounds, int requests, Path root) {
        this.pairs = pairs;
        this.rounds = rounds;
        this.requests = requests;
        this.tern = root.resolve("tern");
        if (!Files.isExecutable(tern)) {
            throw new IllegalStateException("no tern launcher at " + tern + " (run through conformance/bench-veth.sh)");
        }
    }

    void run(Map<String, Double> results) throws IOException {
        pairs.loss(0);
        final Path directory = Files.createTempDirectory("tern-http-bench");
        final Path files = Files.createDirectory(directory.resolve("files"));
        final Path nginxConf = directory.resolve("nginx.conf");
        try {
            Files.write(files.resolve("1k.bin"), new byte[1024]);
            Files.writeString(nginxConf, nginxConfig(directory, files));
            final Map<String, List<Double>> samples = new LinkedHashMap<>();
            for (int round = 0; round < rounds; round++) {
                System.err.printf(Locale.ROOT, "HTTP: tern serve --http against nginx, round %d of %d ...%n", round + 1,
                    rounds);
                final BackgroundCommand nginx = pairs.kernels.startInTern("nginx", "-c", nginxConf.toString(), "-e",
                    "stderr");
                final double[] kernel;
                try {
                    kernel = load(pairs.kernels, "nginx");
                } finally {
                    nginx.close();
                }
                final BackgroundCommand serve = pairs.net.startInTern(tern.toString(), "serve", "--shards", "1", "--link",
                    "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", NetnsHarness.TERN_ADDRESS + "/24", "--http",
                    Integer.toString(PORT), files.toString());
                final double[] ternFigures;
                try {
                    ternFigures = load(pairs.net, "tern serve --http");
                } finally {
                    serve.close();
                }
                add(samples, "http_rps_nginx_keepalive", kernel[0]);
                add(samples, "http_rps_tern_keepalive", ternFigures[0]);
                add(samples, "http_ratio_keepalive", ternFigures[0] / kernel[0]);
                add(samples, "http_rps_nginx_close", kernel[1]);
                add(samples, "http_rps_tern_close", ternFigures[1]);
                add(samples, "http_ratio_close", ternFigures[1] / kernel[1]);
                add(samples, "http_rps_nginx_cold", kernel[4]);
                add(samples, "http_rps_tern_cold", ternFigures[4]);
                add(samples, "http_ratio_cold", ternFigures[4] / kernel[4]);
                add(samples, "http_failed_nginx_keepalive", kernel[2]);
                add(samples, "http_failed_tern_keepalive", ternFigures[2]);
                add(samples, "http_failed_nginx_close", kernel[3]);
                add(samples, "http_failed_tern_close", ternFigures[3]);
            }
            samples.forEach((key, values) -> {
                results.put(key, VethBenchmark.median(values));
                System.err.printf("  %-40s %s%n", key, values.stream().map(v -> String.format(Locale.ROOT, "%.2f", v)).toList());
            });
        } finally {
            for (Path path : List.of(files.resolve("1k.bin"), files, nginxConf, directory.resolve("nginx.pid"), directory)) {
                Files.deleteIfExists(path);
            }
        }
    }

    /** One worker, no access log, everything under the benchmark's temporary directory. */
    private static String nginxConfig(Path directory, Path files) {
        return String.join("\n",
            "worker_processes 1;",
            "daemon off;",
            "pid " + directory.resolve("nginx.pid") + ";",
            "error_log stderr warn;",
            "events { worker_connections 1024; }",
            "http {",
            "  access_log off;",
            "  keepalive_requests 1000000;",
            "  client_body_temp_path " + directory + ";",
            "  proxy_temp_path " + directory + ";",
            "  fastcgi_temp_path " + directory + ";",
            "  uwsgi_temp_path " + directory + ";",
            "  scgi_temp_path " + directory + ";",
            "  server {",
            "    listen " + NetnsHarness.TERN_ADDRESS + ":" + PORT + ";",
            "    root " + files + ";",
            "  }",
            "}",
            "");
    }

    /**
     * Waits for the server to answer, runs ab cold, warms the server up, then runs ab with keep-alive and without from
     * the peer's namespace; returns requests per second [keep-alive, close], failed requests [keep-alive, close] and
     * the cold keep-alive rate.
     */
    private double[] load(NetnsHarness pair, String who) {
        final String url = "http://" + NetnsHarness.TERN_ADDRESS + ":" + PORT + "/1k.bin";
        awaitServing(pair, url, who);
        final double[] cold = ab(pair, who + ", keep-alive, cold", url, Math.max(1, requests / 4), true);
        warmUp(pair, url, who);
        final double[] keepAlive = ab(pair, who + ", keep-alive", url, requests, true);
        final double[] close = ab(pair, who + ", a connection per request", url, Math.max(1, requests / 4), false);
        return new double[] {keepAlive[0], close[0], keepAlive[1], close[1], cold[0]};
    }

    /**
     * Load for {@value #WARM_UP_SECONDS} s, not counted ({@code ab -t}; failures here are not fatal): half keep-alive,
     * half a connection per request, since the two modes run different code (a warm-up of keep-alive only left the
     * connection-per-request run at a third of the rate it reached once its own paths were compiled).
     */
    private static void warmUp(NetnsHarness pair, String url, String who) {
        System.err.printf(Locale.ROOT, "  %s: warming up for %d s%n", who, WARM_UP_SECONDS);
        final String half = Integer.toString(Math.max(1, WARM_UP_SECONDS / 2));
        pair.peerExec(Duration.ofSeconds(WARM_UP_SECONDS + 30L), "ab", "-q", "-s", "10", "-k", "-t", half, "-n",
            "100000000", "-c", Integer.toString(CONCURRENCY), url);
        pair.peerExec(Duration.ofSeconds(WARM_UP_SECONDS + 30L), "ab", "-q", "-s", "10", "-t", half, "-n",
            "100000000", "-c", Integer.toString(CONCURRENCY), url);
    }

    private static void awaitServing(NetnsHarness pair, String url, String who) {
        final long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() - deadline < 0) {
            final CommandResult curl = pair.peerExec(Duration.ofSeconds(5), "curl", "-s", "-o", "/dev/null", "-w",
                "%{http_code}", "--max-time", "2", url);
            if (curl.stdout().strip().equals("200")) {
                return;
            }
            VethBenchmark.sleep(100);
        }
        throw new IllegalStateException(who + " did not answer " + url + " within 30 s");
    }

    private static double[] ab(NetnsHarness pair, String what, String url, int count, boolean keepAlive) {
        final List<String> command = new ArrayList<>(List.of("ab", "-q", "-s", "10", "-n", Integer.toString(count), "-c",
            Integer.toString(CONCURRENCY)));
        if (keepAlive) {
            command.add("-k");
        }
        command.add(url);
        final CommandResult result = pair.peerExec(Duration.ofSeconds(120), command.toArray(String[]::new));
        if (!result.succeeded()) {
            throw new IllegalStateException("ab (" + what + ") exited " + result.exitCode() + ": " + result.stderr().strip());
        }
        final double rps = VethBenchmark.value(RPS, result.stdout(), "ab (" + what + ")");
        final double failed = Double.parseDouble(VethBenchmark.text(FAILED, result.stdout(), "ab (" + what + ")"));
        System.err.printf(Locale.ROOT, "  %s: %.0f requests/s, %.0f failed%n", what, rps, failed);
        return new double[] {rps, failed};
    }

    private static void add(Map<String, List<Double>> samples, String key, double value) {
        samples.computeIfAbsent(key, x -> new ArrayList<>()).add(value);
    }
}
