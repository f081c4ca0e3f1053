package dev.tern.stack;

import dev.tern.ethernet.link.Link;
import dev.tern.ethernet.link.UdpPortOwners;
import dev.tern.tcp.TcpOptions;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.status.AtomicCounter;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Consumer;
import java.util.function.IntFunction;

/**
 * One IPv4 address and MAC served by several {@link NetStack}s, the shards: each a whole stack with its own link,
 * thread, tables, timers and counters file, with nothing shared on the data path. The link steers each TCP or UDP
 * flow to one shard by {@code ShardSteering}'s hash of its 4-tuple (an AF_PACKET fanout group running Tern's cBPF
 * program, or {@code MemoryWire.attachShards}); everything else (ARP, ICMP, IGMP, multicast) reaches shard 0.
 *
 * <ul>
 *   <li>A listener listens on every shard ({@link #listen}): a connection is accepted by the shard its SYN reached.</li>
 *   <li>An active open ({@link NetStack#connect}) on a shard takes a local port whose replies reach that shard.</li>
 *   <li>ARP: shard 0 owns the protocol (answers requests, announces and defends the address) and hands what each ARP
 *       packet taught its cache to the other shards ({@link NeighbourRelay}), which resolve and probe by their own
 *       requests and learn the replies through shard 0.</li>
 *   <li>ICMP and IGMP reach shard 0, which answers echo requests and keeps group membership; an ICMP error about
 *       another shard's flow, and an echo reply to another shard's ping, are handed to that shard; see
 *       docs/DESIGN.md, "Shards".</li>
 *   <li>A frame that reaches the wrong shard is counted ({@code shard.rx.wrong_shard}) and handed to its owner
 *       ({@link ShardFilterLink}), never answered by the shard it reached.</li>
 *   <li>Counters: one file per shard, named {@code NAME[K/N]}; {@code tern stat} prints each and their totals.</li>
 *   <li>A shard whose loop throws is named ({@link #failures()}, and on stderr by the default handler); the
 *       others run on, each on its own thread.</li>
 * </ul>
 *
 * <p>Built and closed on one thread; {@link #shard}, {@link #failures} and {@link #listen} from any.
 */
public final class StackShards implements AutoCloseable {
    private final String name;
    private final List<NetStack> shards;
    private final List<StackRunner> runners = new ArrayList<>();
    private final AtomicReferenceArray<String> failures;
    private final AtomicInteger nextShard = new AtomicInteger();
    private boolean closed;

    private StackShards(String name, List<NetStack> shards) {
        this.name = name;
        this.shards = shards;
        this.failures = new AtomicReferenceArray<>(shards.size());
    }

    /**
     * Builds {@code count} shards: each from a fresh builder that {@code configure} fills (address, gateway, clock,
     * counters, TCP settings; not the link), on the link {@code linkOfShard} opens for it. A link that cannot be
     * opened fails the whole build (the shards already built are closed): a stack that starts with fewer shards than
     * its links steer to would lose those flows.
     */
    public static StackShards build(int count, IntFunction<Link> linkOfShard, Consumer<NetStack.Builder> configure) {
        if (count < 1) {
            throw new IllegalArgumentException("shards must be at least 1, got " + count);
        }
        if (count > UdpPortOwners.MAX_SHARDS) {
            throw new IllegalArgumentException("shards must be at most " + UdpPortOwners.MAX_SHARDS + ", got " + count);
        }
        final List<NetStack> built = new ArrayList<>();
        final UdpPortOwners udpPortOwners = new UdpPortOwners();
        String baseName = "tern";
        try {
            for (int k = 0; k < count; k++) {
                final NetStack.Builder builder = NetStack.builder();
                configure.accept(builder);
                baseName = builder.name();
                builder.name(count == 1 ? baseName : shardName(baseName, k, count));
                builder.link(Objects.requireNonNull(linkOfShard.apply(k), "link of shard " + k)).shard(k, count)
                    .udpPortOwners(udpPortOwners);
                built.add(builder.build());
            }
        } catch (RuntimeException | Error e) {
            for (NetStack stack : built) {
                stack.close();
            }
            throw e;
        }
        final StackShards shards = new StackShards(baseName, List.copyOf(built));
        shards.relayNeighbours();
        shards.connectInboxes();
        return shards;
    }

    /** The counters-file name of shard {@code k} of {@code count}: {@code NAME[K/N]} ({@code tern stat} groups by it). */
    public static String shardName(String name, int k, int count) {
        return name + "[" + k + "/" + count + "]";
    }

    /** Each shard's link filter learns every shard's inbox, to hand on frames that are another's. */
    private void connectInboxes() {
        if (shards.size() == 1) {
            return;
        }
        final ShardInbox[] inboxes = new ShardInbox[shards.size()];
        for (int k = 0; k < inboxes.length; k++) {
            inboxes[k] = ((ShardFilterLink) shards.get(k).link()).inbox();
            inboxes[k].owner(shards.get(k));
        }
        for (NetStack shard : shards) {
            ((ShardFilterLink) shard.link()).inboxes(inboxes);
        }
    }

    /** Shard 0 tells the others what each ARP packet taught it (docs/DESIGN.md, "Shards"). */
    private void relayNeighbours() {
        if (shards.size() == 1) {
            return;
        }
        final NetStack owner = shards.getFirst();
        final NeighbourRelay[] relays = new NeighbourRelay[shards.size() - 1];
        for (int k = 1; k < shards.size(); k++) {
            relays[k - 1] = shards.get(k).neighbourRelay();
        }
        final AtomicCounter full = owner.counters().counter("shard.neighbour_relay_full");
        owner.arp().onLearned((senderIp, senderMac, addressedToUs, isReply) -> {
            for (NeighbourRelay relay : relays) {
                if (!relay.post(senderIp, senderMac, addressedToUs, isReply)) {
                    full.incrementRelease();
                }
            }
        });
    }

    public String name() {
        return name;
    }

    public int count() {
        return shards.size();
    }

    public NetStack shard(int k) {
        return shards.get(k);
    }

    public List<NetStack> shards() {
        return shards;
    }

    /** The shards in turn: where the next active open goes when the caller has no preference. */
    public NetStack nextShard() {
        return shards.get(Math.floorMod(nextShard.getAndIncrement(), shards.size()));
    }

    /** Listens on {@code port} on every shard; the listeners in shard order. */
    public List<TcpListener> listen(int port, int backlog, TcpOptions options) throws TernSocketException {
        final List<TcpListener> listeners = new ArrayList<>();
        try {
            for (NetStack shard : shards) {
                listeners.add(shard.listen(port, backlog, options));
            }
        } catch (TernSocketException | RuntimeException e) {
            for (TcpListener listener : listeners) {
                listener.close();
            }
            throw e;
        }
        return Collections.unmodifiableList(listeners);
    }

    /**
     * Runs every shard on a {@link StackRunner} of its own with the idle strategy {@code idle} makes for it (by shard
     * index); an exception escaping a shard's turn is recorded against it ({@link #failures()}) and printed once per
     * shard with its name.
     */
    public void start(IntFunction<IdleStrategy> idle) {
        start(idle, null);
    }

    /** {@link #start(IntFunction)} with the runners' threads made by {@code threads} (null: StackRunner's own). */
    public void start(IntFunction<IdleStrategy> idle, java.util.concurrent.ThreadFactory threads) {
        for (int k = 0; k < shards.size(); k++) {
            final int shard = k;
            final NetStack stack = shards.get(k);
            runners.add(StackRunner.start(stack, idle.apply(k), error -> failed(shard, error), threads));
        }
    }

    /**
     * Shard {@code k}'s loop threw (a bug: bad input is counted, never thrown). It is recorded and said once, with the
     * shard's name; the shard's runner goes on with its next turn, and the other shards are not touched.
     */
    void failed(int k, Throwable error) {
        if (failures.compareAndSet(k, null, String.valueOf(error))) {
            System.err.println("tern: shard " + k + " of " + shards.size() + " (" + shards.get(k).name() + ") failed: "
                + error + "; the other shards go on serving");
        }
    }

    /** Which shards failed and why: one line per failed shard ({@code shard K (NAME): ERROR}); empty when none. */
    public List<String> failures() {
        final List<String> lines = new ArrayList<>();
        for (int k = 0; k < shards.size(); k++) {
            final String failure = failures.get(k);
            if (failure != null) {
                lines.add("shard " + k + " (" + shards.get(k).name() + "): " + failure);
            }
        }
        return lines;
    }

    /**
     * One turn of every shard on the calling thread (tests and single-threaded embedders, without {@link #start}); an
     * exception from one shard is recorded against it and the others still run. Returns the work done.
     */
    public int pollAll() {
        int work = 0;
        for (int k = 0; k < shards.size(); k++) {
            try {
                work += shards.get(k).doWork();
            } catch (RuntimeException e) {
                shards.get(k).pollFailed();
                failed(k, e);
            }
        }
        return work;
    }

    /** Stops the runners (if started) and closes every shard, each even if closing another failed. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException first = null;
        for (StackRunner runner : runners) {
            try {
                runner.close();
            } catch (RuntimeException e) {
                first = first == null ? e : first;
            }
        }
        if (runners.isEmpty()) {
            for (NetStack shard : shards) {
                try {
                    shard.close();
                } catch (RuntimeException e) {
                    first = first == null ? e : first;
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
