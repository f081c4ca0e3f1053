package dev.tern.conformance.interop;

import dev.tern.core.testing.ExternalTools;
import dev.tern.ethernet.wire.MacAddress;
import dev.tern.testkit.netns.BackgroundCommand;
import dev.tern.testkit.netns.CommandResult;
import dev.tern.testkit.netns.NetnsHarness;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Linux kernel on the peer end of the veth pair (198.18.0.1 in its own namespace), driven through its ordinary
 * tools: {@code ping}, {@code arping}, {@code ip neigh}, {@code /proc/net/snmp}, {@code tcpdump}, and a small
 * Python raw-socket helper. Every command is bounded in time and talks only to Tern's address (198.18.0.2).
 */
final class KernelPeer {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Pattern PING_SUMMARY = Pattern.compile("(\\d+) packets transmitted, (\\d+) received");
    private static final Pattern PING_REPLY = Pattern.compile("^(\\d+) bytes from ([0-9.]+): icmp_seq=(\\d+)", Pattern.MULTILINE);

    private final NetnsHarness net;

    KernelPeer(NetnsHarness net) {
        this.net = net;
    }

    /** What {@code ping} reported. */
    record PingOutcome(int transmitted, int received, List<Integer> replyBytes, List<Integer> replySequences, String output) {
        boolean clean() {
            final String text = output.toLowerCase(Locale.ROOT);
            return !text.contains("wrong data") && !text.contains("dup!") && !text.contains("truncated");
        }
    }

    /** {@code ping -c count -s size -i interval 198.18.0.2}, waiting at most 2 s for each reply. */
    PingOutcome ping(int count, int size, double intervalSeconds) {
        return ping(NetnsHarness.TERN_ADDRESS, count, size, intervalSeconds);
    }

    /**
     * {@code ping -c count -s size -i interval OPTIONS ADDRESS} (198.18.0.0/24 only), waiting 2 s for replies that
     * do not come (a later {@code -W} in {@code options} wins).
     */
    PingOutcome ping(String address, int count, int size, double intervalSeconds, String... options) {
        if (!address.startsWith("198.18.0.")) {
            throw new IllegalArgumentException("interop tests ping 198.18.0.0/24 only, not " + address);
        }
        final String ping = ExternalTools.require("ping", "iputils-ping").toString();
        final List<String> command = new ArrayList<>(List.of(ping, "-n", "-c", Integer.toString(count), "-s",
            Integer.toString(size), "-i", Double.toString(intervalSeconds), "-W", "2"));
        command.addAll(List.of(options));
        command.add(address);
        final CommandResult result = net.peerExec(TIMEOUT, command.toArray(String[]::new));
        final String output = result.stdout() + result.stderr();
        final Matcher summary = PING_SUMMARY.matcher(output);
        if (!summary.find()) {
            throw new AssertionError("ping printed no summary: " + output);
        }
        final List<Integer> bytes = new ArrayList<>();
        final List<Integer> sequences = new ArrayList<>();
        final Matcher reply = PING_REPLY.matcher(result.stdout());
        while (reply.find()) {
            bytes.add(Integer.parseInt(reply.group(1)));
            sequences.add(Integer.parseInt(reply.group(3)));
        }
        return new PingOutcome(Integer.parseInt(summary.group(1)), Integer.parseInt(summary.group(2)), bytes, sequences, output);
    }

    /** A neighbour entry: the MAC ({@code -1} when none) and the state as {@code ip neigh} prints it. */
    record Neighbour(long mac, String state) {
    }

    /** The kernel's neighbour entry for {@code address} on its end of the pair, or {@code Neighbour(-1, "NONE")}. */
    Neighbour neighbour(String address) {
        final String line = net.peerExec(TIMEOUT, "ip", "neigh", "show", "to", address, "dev", NetnsHarness.PEER_INTERFACE)
            .orThrow().stdout().strip();
        if (line.isEmpty()) {
            return new Neighbour(-1, "NONE");
        }
        final String[] words = line.split("\\s+");
        long mac = -1;
        for (int i = 0; i + 1 < words.length; i++) {
            if (words[i].equals("lladdr")) {
                mac = MacAddress.parse(words[i + 1]);
            }
        }
        return new Neighbour(mac, words[words.length - 1]);
    }

    /** Sets the kernel's entry for {@code address}, as {@code ip neigh replace ... nud STATE}. */
    void setNeighbour(String address, long mac, String nud) {
        net.peerExec(TIMEOUT, "ip", "neigh", "replace", address, "lladdr", MacAddress.format(mac), "dev",
            NetnsHarness.PEER_INTERFACE, "nud", nud).orThrow();
    }

    /**
     * The kernel's MIB counters, {@code /proc/net/snmp} (Ip, Icmp, IcmpMsg, Tcp, Udp) and {@code /proc/net/netstat}
     * (TcpExt, IpExt), as {@code "Ip.ReasmOKs" -> value}. Both files are pairs of lines: names, then values. Read by
     * this thread inside the peer's namespace ({@code /proc/thread-self/net} follows the thread's namespace), so no
     * program is started: a test may read them around every packet it sends.
     */
    Map<String, Long> snmp() {
        final List<String> lines = net.peerNamespace().call(() -> {
            try {
                return Files.readString(Path.of("/proc/thread-self/net/snmp"))
                    + Files.readString(Path.of("/proc/thread-self/net/netstat"));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }).lines().toList();
        final Map<String, Long> values = new HashMap<>();
        for (int i = 0; i + 1 < lines.size(); i += 2) {
            final String[] names = lines.get(i).split("\\s+");
            final String[] numbers = lines.get(i + 1).split("\\s+");
            final String group = names[0].substring(0, names[0].length() - 1);
            for (int n = 1; n < Math.min(names.length, numbers.length); n++) {
                values.put(group + "." + names[n], Long.parseLong(numbers[n]));
            }
        }
        return values;
    }

    /** How much each MIB counter grew between two {@link #snmp()} readings. */
    static long delta(Map<String, Long> before, Map<String, Long> after, String counter) {
        return Objects.requireNonNull(after.get(counter), counter) - Objects.requireNonNull(before.get(counter), counter);
    }

    /** Runs {@code arping -i peer0 ARGS... 198.18.0.2} (Thomas Habets' arping). */
    CommandResult arping(String... arguments) {
        final List<String> command = new ArrayList<>(List.of(ExternalTools.require("arping", "arping").toString(), "-i",
            NetnsHarness.PEER_INTERFACE));
        command.addAll(List.of(arguments));
        command.add(NetnsHarness.TERN_ADDRESS);
        return net.peerExec(TIMEOUT, command.toArray(String[]::new));
    }

    /**
     * Sends whole IPv4 datagrams (header included; the kernel fills in the header checksum and routes them) from a
     * raw socket, then returns the ICMP datagrams the kernel receives within {@code waitSeconds}, stopping after
     * {@code expected} of them.
     */
    List<byte[]> sendRawAndCollectIcmp(double waitSeconds, int expected, byte[]... datagrams) {
        final List<String> command = new ArrayList<>(List.of(ExternalTools.require("python3", "python3").toString(),
            helperScript().toString(), Double.toString(waitSeconds), Integer.toString(expected)));
        for (byte[] datagram : datagrams) {
            command.add(HexFormat.of().formatHex(datagram));
        }
        final CommandResult result = net.peerExec(Duration.ofSeconds((long) waitSeconds + 20), command.toArray(String[]::new));
        if (result.exitCode() > 1) {
            throw new AssertionError("raw IP helper failed: " + result.stderr() + result.stdout());
        }
        return result.stdout().lines().filter(l -> !l.isBlank()).map(HexFormat.of()::parseHex).toList();
    }

    private static Path helperScript() {
        return resource("rawip.py");
    }

    private static Path resource(String name) {
        try {
            return Path.of(Objects.requireNonNull(KernelPeer.class.getResource(name), name + " on the test class path").toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static List<String> peerPy(String... arguments) {
        final List<String> command = new ArrayList<>(List.of(ExternalTools.require("python3", "python3").toString(),
            resource("peer.py").toString()));
        command.addAll(List.of(arguments));
        return command;
    }

    /**
     * Runs {@code peer.py ARGS} (the kernel's UDP/TCP side, see the script) in the peer namespace and waits for it,
     * at most {@code timeout}.
     */
    CommandResult runPeerPy(Duration timeout, String... arguments) {
        return net.peerExec(timeout, peerPy(arguments).toArray(String[]::new));
    }

    /** Starts {@code peer.py ARGS} in the peer namespace and returns once it printed "ready" (bound, listening). */
    BackgroundCommand startPeerPy(String... arguments) {
        return net.startInPeer(peerPy(arguments).toArray(String[]::new)).awaitOutput("ready", Duration.ofSeconds(10));
    }

    /**
     * Starts {@code peer.py ARGS} in the peer namespace and, polling the stack this thread owns meanwhile, returns once
     * it printed "ready" (a stack that is not polled would delay its own frames: its announcement, its answers).
     */
    BackgroundCommand startPeerPyPolling(VethRig rig, String... arguments) {
        final BackgroundCommand command = launchPeerPy(arguments);
        if (!rig.pollUntil(() -> command.stdout().contains("ready") || !command.isAlive(), Duration.ofSeconds(10))
            || !command.stdout().contains("ready")) {
            throw new AssertionError("peer.py " + String.join(" ", arguments) + " did not get ready: " + command.stdout() + command.stderr());
        }
        return command;
    }

    /** The first line of {@code output} that starts with {@code word}, or "" when none does. */
    static String line(String output, String word) {
        return output.lines().filter(l -> l.equals(word) || l.startsWith(word + " ")).findFirst().orElse("");
    }

    /** Starts {@code peer.py ARGS} in the peer namespace (a client that needs no time to get ready). */
    BackgroundCommand launchPeerPy(String... arguments) {
        return net.startInPeer(peerPy(arguments).toArray(String[]::new));
    }

    /**
     * Stops a {@link #tcpdump} once its file holds {@code frames} frames (or after 2 s), with SIGTERM so it flushes.
     */
    static void stopCapture(BackgroundCommand tcpdump, Path file, int frames) {
        final long deadline = System.nanoTime() + 2_000_000_000L;
        while (System.nanoTime() - deadline < 0 && tcpdump.isAlive() && capturedFrames(file) < frames) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        tcpdump.stop();
    }

    private static int capturedFrames(Path file) {
        try {
            return java.nio.file.Files.size(file) > 24 ? dev.tern.conformance.replay.Capture.read(file).frames().size() : 0;
        } catch (java.io.IOException | RuntimeException e) {
            return 0;
        }
    }

    /**
     * Starts {@code tcpdump} on the peer's end, writing at most {@code maxPackets} whole frames to {@code file} with
     * nanosecond timestamps; returns once it listens. Immediate mode: without it libpcap's TPACKET_V3 ring hands
     * frames over only when a block times out, and frames still in the ring when tcpdump is stopped are lost. Stop
     * it with {@link #stopCapture} (or the harness does when it closes).
     */
    BackgroundCommand tcpdump(Path file, int maxPackets) {
        final String tcpdump = ExternalTools.require("tcpdump", "tcpdump").toString();
        return net.startInPeer(tcpdump, "-i", NetnsHarness.PEER_INTERFACE, "-n", "-s", "0", "-U", "--immediate-mode", "-Z", "root",
            "--time-stamp-precision=nano", "-c", Integer.toString(maxPackets), "-w", file.toString())
            .awaitOutput("listening on", Duration.ofSeconds(10));
    }
}
