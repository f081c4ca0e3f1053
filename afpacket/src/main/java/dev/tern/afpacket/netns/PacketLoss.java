package dev.tern.afpacket.netns;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Random packet loss injected by the Linux kernel on the peer's end of a {@link NetnsHarness} pair, in both directions:
 * an nftables {@code netdev} table in the peer namespace with one chain on the ingress hook and one on the egress hook
 * of {@value NetnsHarness#PEER_INTERFACE}, each counting every packet and dropping one when
 * {@code numgen random mod 10000 < N} (N = percent x 100, so 0.01 % steps). There is no netem on the kernels we run
 * on; this is the kernel's own random source, per packet, independent between packets.
 *
 * <pre>
 *   table netdev tern_loss {                               (in the peer namespace)
 *     chain ingress { type filter hook ingress device "peer0" priority -500; policy accept;
 *                     counter                                        (every packet into the peer)
 *                     numgen random mod 10000 &lt; N counter drop }    (the ones dropped)
 *     chain egress  { ... hook egress ... the same ... }
 *   }
 * </pre>
 *
 * <p><b>Per packet, not per GSO burst.</b> The egress hook runs in {@code __dev_queue_xmit} before the device layer
 * segments, and the kernel's TCP always builds GSO packets (since Linux 4.19, whatever the device's offloads). A
 * rule there would drop a kernel sender's whole 64 KiB burst at once (measured: 36 KiB per dropped packet with
 * offloads off), which is burst loss, not random loss. So while the rules are installed the peer's device is given
 * {@code gso_max_segs 1}: the peer's TCP then hands the device one segment per packet, and the rule sees packets as
 * they go on the wire. The ingress hook already does: frames arrive one by one after the sender's device segmented
 * them (with offloads off; with offloads on, a sender's super-frames cross a veth whole and are dropped whole, so
 * use this with offloads off). The Tern side is not touched: its interface has no hooks and no kernel address.
 *
 * <p>{@link #close()} deletes the table and gives the device its {@code gso_max_segs} back; deleting the namespace
 * (the harness's {@link NetnsHarness#close()}) removes both anyway, so nothing outlives the harness even if this is
 * never closed. Needs {@code nft} (Debian package nftables). Thread-safe (each call runs {@code nft} once).
 */
public final class PacketLoss implements AutoCloseable {
    /** The table's name in the peer namespace. */
    public static final String TABLE = "tern_loss";
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(20);
    private static final Pattern GSO_MAX_SEGS = Pattern.compile("gso_max_segs (\\d+)");
    private static final Pattern COUNTER = Pattern.compile("counter packets (\\d+) bytes (\\d+)");

    private final NetworkNamespace peer;
    private final String nft;
    private final String previousGsoMaxSegs;
    private double percent;
    private boolean closed;

    /** Packets that reached each hook, and those dropped there, since the rules were (re)installed. */
    public record Counts(long ingressPackets, long ingressDropped, long egressPackets, long egressDropped) {
        public long dropped() {
            return ingressDropped + egressDropped;
        }

        public long packets() {
            return ingressPackets + egressPackets;
        }

        /** The share of packets dropped, in percent (NaN when none passed). */
        public double droppedPercent() {
            return packets() == 0 ? Double.NaN : 100.0 * dropped() / packets();
        }
    }

    private PacketLoss(NetworkNamespace peer, String nft, String previousGsoMaxSegs) {
        this.peer = peer;
        this.nft = nft;
        this.previousGsoMaxSegs = previousGsoMaxSegs;
    }

    /**
     * Installs the rules on the peer's end of {@code net} with {@code percent} loss each way (0 to 100). Fails (and
     * leaves nothing behind) if nft is missing or the kernel refuses the rules.
     */
    public static PacketLoss onPeer(NetnsHarness net, double percent) {
        final String nft = Commands.require("nft", "nftables");
        final NetworkNamespace peer = net.peerNamespace();
        final Matcher segs = GSO_MAX_SEGS.matcher(peer.ip("-d", "link", "show", "dev", NetnsHarness.PEER_INTERFACE).stdout());
        if (!segs.find()) {
            throw new NetnsException("ip -d link show printed no gso_max_segs for " + NetnsHarness.PEER_INTERFACE);
        }
        final String gsoMaxSegs = segs.group(1);
        final PacketLoss loss = new PacketLoss(peer, nft, gsoMaxSegs);
        try {
            peer.ip("link", "set", "dev", NetnsHarness.PEER_INTERFACE, "gso_max_segs", "1");
            loss.percent(percent);
            return loss;
        } catch (RuntimeException e) {
            try {
                loss.close();
            } catch (RuntimeException cleanup) {
                e.addSuppressed(cleanup);
            }
            throw e;
        }
    }

    /** The rule's threshold for {@code percent}: {@code numgen random mod 10000 < threshold}. */
    static int threshold(double percent) {
        if (!(percent >= 0 && percent <= 100)) {
            throw new IllegalArgumentException("loss " + percent + " % outside 0..100");
        }
        return (int) Math.round(percent * 100);
    }

    /** The nft script that (re)creates the table in one transaction, counters at zero. */
    static String script(int threshold) {
        final StringBuilder script = new StringBuilder();
        // Declaring the table first makes the delete succeed whether or not it existed: one atomic replacement.
        script.append("table netdev ").append(TABLE).append('\n');
        script.append("delete table netdev ").append(TABLE).append('\n');
        script.append("table netdev ").append(TABLE).append(" {\n");
        // numgen's values are 0..9999, so "< 10000" is refused: 100 % is a plain drop.
        final String match = threshold >= 10_000 ? "" : "numgen random mod 10000 < " + threshold + " ";
        for (String hook : new String[] {"ingress", "egress"}) {
            script.append(String.format(Locale.ROOT, """
                  chain %1$s {
                    type filter hook %1$s device "%2$s" priority -500; policy accept;
                    counter
                    %3$scounter drop
                  }
                """, hook, NetnsHarness.PEER_INTERFACE, match));
        }
        return script.append("}\n").toString();
    }

    /** Sets the loss each way to {@code percent} (0 to 100); the counters start again from zero. */
    public synchronized PacketLoss percent(double percent) {
        final int threshold = threshold(percent);
        if (closed) {
            throw new IllegalStateException("packet loss rules already removed");
        }
        final Path file = writeScript(script(threshold));
        try {
            peer.exec(COMMAND_TIMEOUT, nft, "-f", file.toString()).orThrow();
        } finally {
            Commands.deleteQuietly(file);
        }
        this.percent = percent;
        return this;
    }

    private static Path writeScript(String text) {
        try {
            final Path file = Files.createTempFile("tern-loss", ".nft");
            Files.writeString(file, text);
            return file;
        } catch (IOException e) {
            throw new NetnsException("cannot write the nft script: " + e.getMessage(), e);
        }
    }

    /** The loss each way now, in percent. */
    public synchronized double percent() {
        return percent;
    }

    /** What the rules counted since they were last (re)installed. */
    public Counts counts() {
        final long[] ingress = chainCounters("ingress");
        final long[] egress = chainCounters("egress");
        return new Counts(ingress[0], ingress[1], egress[0], egress[1]);
    }

    /** {every packet, dropped packets} of one chain. */
    private long[] chainCounters(String chain) {
        final String listing = peer.exec(COMMAND_TIMEOUT, nft, "list", "chain", "netdev", TABLE, chain).orThrow().stdout();
        final Matcher counter = COUNTER.matcher(listing);
        final long[] values = new long[2];
        for (int i = 0; i < 2; i++) {
            if (!counter.find()) {
                throw new NetnsException("no counters in nft's listing of chain " + chain + ": " + listing);
            }
            values[i] = Long.parseLong(counter.group(1));
        }
        return values;
    }

    /** Deletes the table and restores the device's {@code gso_max_segs}. Idempotent; a no-op once the namespace is gone. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (!peer.exists()) {
            return;
        }
        RuntimeException failure = null;
        final CommandResult listed = peer.exec(COMMAND_TIMEOUT, nft, "list", "table", "netdev", TABLE);
        if (listed.exitCode() == 0) {
            try {
                peer.exec(COMMAND_TIMEOUT, nft, "delete", "table", "netdev", TABLE).orThrow();
            } catch (RuntimeException e) {
                failure = e;
            }
        }
        try {
            peer.ip("link", "set", "dev", NetnsHarness.PEER_INTERFACE, "gso_max_segs", previousGsoMaxSegs);
        } catch (RuntimeException e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%.2f %% loss each way on %s in %s", percent, NetnsHarness.PEER_INTERFACE, peer.name());
    }
}
