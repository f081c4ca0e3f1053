package dev.tern.tcp;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The layer's settings as they change while it runs, and the settings each connection was opened with. {@link
 * TcpLayer#reconfigure} takes a new {@link TcpConfig} for what opens after it, as Linux applies most TCP sysctls to
 * connections started after the change: a connection open at the time keeps the settings it was opened with (its
 * timestamps and SACK offer, retry limits, delayed ACK, MSL, FIN-WAIT-2 time, initial window, slow start after idle,
 * sent-bytes mark), and a listener's decisions on a SYN (Fast Open, SYN cookies, SYN queue, backlog) follow the
 * settings in effect when the SYN comes. The fields that size the layer or its keys ({@link #LAYER_WIDE}) are fixed for
 * its life; a new configuration that changes one is refused.
 *
 * <p>Also the per-connection attempt limit, Linux's TCP_SYNCNT: how many times this connection's SYN is retransmitted
 * before the attempt times out, in place of the settings' {@link TcpConfig#synRetries}.
 *
 * <p>Owned by the shard thread; not thread-safe. {@link #of} is an array load: no allocation on the hot path.
 */
public final class ConnectionSettings {
    /** The fields {@link TcpLayer#reconfigure} cannot change: they size the layer's tables or are its keys. */
    public static final List<String> LAYER_WIDE = List.of("maxConnections", "sendBufferSize", "receiveBufferSize", "rto", "isnKey",
        "fixedIsn", "outOfOrder", "challengeAckLimit", "memoryLimits", "maxTimeWait", "ephemeralPorts",
        "congestionControl", "lossDetection", "recovery", "receivePolicy", "segmentChecks", "fastOpenKeys",
        "synSentText");

    private final TcpConfig[] bySlot;
    /** TCP_SYNCNT per connection; 0: the connection's settings' {@link TcpConfig#synRetries}. */
    private final int[] synRetries;
    /** TCP_NOOPT per connection: its SYN offers no option at all (TcpOptions#noOptions). */
    private final boolean[] noOptions;
    /** TCP_KEEPINIT per connection in milliseconds; 0: none (TcpOptions#connectTimeoutMs). */
    private final int[] connectTimeoutMs;
    private TcpConfig current;

    ConnectionSettings(TcpConfig config, int capacity) {
        this.current = Objects.requireNonNull(config);
        this.bySlot = new TcpConfig[capacity];
        this.synRetries = new int[capacity];
        this.noOptions = new boolean[capacity];
        this.connectTimeoutMs = new int[capacity];
    }

    /** The settings a connection or listener opened now gets. */
    public TcpConfig current() {
        return current;
    }

    /** The settings connection slot {@code c} was opened with. */
    TcpConfig of(int c) {
        return bySlot[c];
    }

    /** Slot {@code c} opens a connection: it takes the settings in effect and no TCP_SYNCNT of its own. */
    void opened(int c) {
        bySlot[c] = current;
        synRetries[c] = 0;
        noOptions[c] = false;
        connectTimeoutMs[c] = 0;
    }

    boolean noOptions(int c) {
        return noOptions[c];
    }

    void noOptions(int c, boolean value) {
        noOptions[c] = value;
    }

    int connectTimeoutMs(int c) {
        return connectTimeoutMs[c];
    }

    void connectTimeoutMs(int c, int value) {
        connectTimeoutMs[c] = value;
    }

    /** TCP_SYNCNT of slot {@code c}: its own limit if set, else its settings'. */
    int synRetries(int c) {
        return synRetries[c] > 0 ? synRetries[c] : bySlot[c].synRetries();
    }

    void synRetries(int c, int retries) {
        synRetries[c] = retries;
    }

    /**
     * Takes {@code next} for connections and listener decisions from now on. Throws IllegalArgumentException naming
     * the fields of {@link #LAYER_WIDE} that {@code next} would change; nothing changes then.
     */
    void reconfigure(TcpConfig next) {
        final List<String> fixed = changedLayerWide(current, next);
        if (!fixed.isEmpty()) {
            throw new IllegalArgumentException("these settings are fixed for the layer's life and cannot change while "
                + "it runs: " + String.join(", ", fixed));
        }
        current = next;
    }

    /** The fields of {@link #LAYER_WIDE} in which {@code b} differs from {@code a}. */
    public static List<String> changedLayerWide(TcpConfig a, TcpConfig b) {
        final List<String> changed = new ArrayList<>();
        differs(changed, "maxConnections", a.maxConnections() != b.maxConnections());
        differs(changed, "sendBufferSize", a.sendBufferSize() != b.sendBufferSize());
        differs(changed, "receiveBufferSize", a.receiveBufferSize() != b.receiveBufferSize());
        differs(changed, "rto", a.rtoInitialNs() != b.rtoInitialNs() || a.rtoMinNs() != b.rtoMinNs()
            || a.rtoMaxNs() != b.rtoMaxNs());
        differs(changed, "isnKey", a.isnKey0() != b.isnKey0() || a.isnKey1() != b.isnKey1());
        differs(changed, "fixedIsn", a.fixedIsn() != b.fixedIsn());
        differs(changed, "outOfOrder", a.outOfOrderRanges() != b.outOfOrderRanges()
            || a.outOfOrderBlocks() != b.outOfOrderBlocks());
        differs(changed, "challengeAckLimit", a.challengeAckLimit() != b.challengeAckLimit());
        differs(changed, "memoryLimits", a.memoryPressureBytes() != b.memoryPressureBytes()
            || a.memoryLimitBytes() != b.memoryLimitBytes());
        differs(changed, "maxTimeWait", a.maxTimeWait() != b.maxTimeWait());
        differs(changed, "ephemeralPorts", a.ephemeralFirst() != b.ephemeralFirst()
            || a.ephemeralLast() != b.ephemeralLast());
        differs(changed, "congestionControl", !a.congestionControl().equals(b.congestionControl()));
        differs(changed, "lossDetection", !a.lossDetection().equals(b.lossDetection()));
        differs(changed, "recovery", !a.recovery().equals(b.recovery()));
        differs(changed, "receivePolicy", !a.receivePolicy().equals(b.receivePolicy()));
        differs(changed, "segmentChecks", !a.segmentChecks().equals(b.segmentChecks()));
        differs(changed, "fastOpenKeys", !a.fastOpenKeys().equals(b.fastOpenKeys()));
        differs(changed, "synSentText", a.synSentText() != b.synSentText());
        return changed;
    }

    private static void differs(List<String> changed, String field, boolean differs) {
        if (differs) {
            changed.add(field);
        }
    }
}
