package dev.tern.tcp;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static dev.tern.tcp.TcpControlBlocks.F_SACK;

/**
 * The layer's plug points ({@link CongestionControl}, {@link LossDetection}, {@link LossRecovery}) by name, with the
 * configured defaults, and each connection's choice: the row keeps an index per plug point, the hot path looks the
 * implementation up here. Without SACK a connection uses RFC 5681's duplicate ACKs and RFC 6582's NewReno, whatever
 * it chose (RACK and RFC 6675 need the scoreboard SACK fills).
 *
 * <p>Congestion controls come from the {@link CongestionControlCatalog} of the class loader that built the layer:
 * the built-in and discovered ones at once, a class named in full the first time a connection or the configuration
 * names it (then by that class name too).
 *
 * <p>Owned by the shard thread; not thread-safe. Registering is a cold path; lookups do not allocate.
 */
final class PlugPointRegistry {
    private final TcpControlBlocks tcb;
    private final PlugPoints<CongestionControl> congestionControls = new PlugPoints<>("congestion control");
    private final CongestionControlCatalog catalog = CongestionControlCatalog.ofContext();
    /** Classes loaded by their full name, to their index: a name loads once per layer. */
    private final Map<String, Integer> loadedCongestionControls = new HashMap<>();
    private final PlugPoints<LossDetection> lossDetections = new PlugPoints<>("loss detection");
    private final PlugPoints<LossRecovery> recoveries = new PlugPoints<>("loss recovery");
    private final int defaultCongestionControl;
    private final int defaultLossDetection;
    private final int defaultRecovery;
    private final int dupAckDetection;
    private final int newRenoRecovery;
    private final ConnectionSettings settings;

    /** The built-in implementations (and discovered congestion controls); the configured defaults must resolve. */
    PlugPointRegistry(TcpControlBlocks tcb, ConnectionSettings settings) {
        this.tcb = tcb;
        this.settings = settings;
        final TcpConfig config = settings.current();
        for (CongestionControl builtIn : CongestionControlCatalog.builtIns()) {
            congestionControls.register(builtIn.forLayer(tcb.capacity()));
        }
        for (CongestionControl discovered : catalog.discovered()) {
            congestionControls.register(discovered.forLayer(tcb.capacity()));
        }
        lossDetections.register(new RackLossDetection());
        dupAckDetection = lossDetections.register(new DupAckLossDetection());
        recoveries.register(new PrrRecovery());
        recoveries.register(new Rfc6675Recovery());
        newRenoRecovery = recoveries.register(new NewRenoRecovery());
        final int configured = congestionControls.id(config.congestionControl());
        defaultCongestionControl = configured >= 0 ? configured : loadCongestionControl(config.congestionControl());
        defaultLossDetection = lossDetections.require(config.lossDetection());
        defaultRecovery = recoveries.require(config.recovery());
    }

    void registerCongestionControl(CongestionControl congestionControl) {
        congestionControls.register(congestionControl.forLayer(tcb.capacity()));
    }

    void registerLossDetection(LossDetection lossDetection) {
        lossDetections.register(lossDetection);
    }

    void registerLossRecovery(LossRecovery recovery) {
        recoveries.register(recovery);
    }

    List<String> congestionControlNames() {
        return congestionControls.names();
    }

    List<String> lossDetectionNames() {
        return lossDetections.names();
    }

    List<String> lossRecoveryNames() {
        return recoveries.names();
    }

    /** Whether every plug point {@code options} names is registered (null names the default). */
    boolean knows(TcpOptions options) {
        return (options.congestionControl() == null || congestionControlId(options.congestionControl()) >= 0)
            && (options.lossDetection() == null || lossDetections.id(options.lossDetection()) >= 0)
            && (options.recovery() == null || recoveries.id(options.recovery()) >= 0);
    }

    /** A new connection's choices: those of {@code options}, the defaults where it names none. */
    void choose(int c, TcpOptions options) {
        tcb.ccId(c, options.congestionControl() == null ? defaultCongestionControl
            : congestionControlId(options.congestionControl()));
        tcb.lossDetectionId(c, options.lossDetection() == null ? defaultLossDetection
            : lossDetections.id(options.lossDetection()));
        tcb.recoveryId(c, options.recovery() == null ? defaultRecovery : recoveries.id(options.recovery()));
    }

    /** TCP_CONGESTION: a synchronized connection starts the new control from its initial window. 0 or -INVALID. */
    int switchCongestionControl(int c, String name, long nowNs) {
        final int id = congestionControlId(name);
        if (id < 0) {
            return -TcpError.INVALID;
        }
        if (id != tcb.ccId(c)) {
            tcb.ccId(c, id);
            if (TcpState.isSynchronized(tcb.state(c))) {
                congestionControl(c).init(tcb, c, tcb.sndMss(c), settings.of(c).initialCwndSegments(), nowNs);
            }
        }
        return 0;
    }

    /** The index of the congestion control {@code name} selects, loading a class named in full once; -1 if none. */
    private int congestionControlId(String name) {
        final int id = congestionControls.id(name);
        if (id >= 0) {
            return id;
        }
        final Integer loaded = loadedCongestionControls.get(name);
        if (loaded != null) {
            return loaded;
        }
        try {
            return loadCongestionControl(name);
        } catch (IllegalArgumentException unusable) {
            return -1;
        }
    }

    /** Registers what {@code name} resolves to; a name that resolves to nothing says why, with the valid names. */
    private int loadCongestionControl(String name) {
        final int id = congestionControls.register(catalog.resolve(name).forLayer(tcb.capacity()));
        loadedCongestionControls.put(name, id);
        return id;
    }

    /** The connection's loss detection from now on (effective with SACK). 0 or -INVALID. */
    int switchLossDetection(int c, String name) {
        final int id = lossDetections.id(name);
        if (id < 0) {
            return -TcpError.INVALID;
        }
        tcb.lossDetectionId(c, id);
        return 0;
    }

    /** The connection's loss recovery from the next recovery on (the caller refuses it during one). 0 or -INVALID. */
    int switchLossRecovery(int c, String name) {
        final int id = recoveries.id(name);
        if (id < 0) {
            return -TcpError.INVALID;
        }
        tcb.recoveryId(c, id);
        return 0;
    }

    CongestionControl congestionControl(int c) {
        return congestionControls.get(tcb.ccId(c));
    }

    /** The connection's loss detection: its choice with SACK; RFC 5681's duplicate ACKs without. */
    LossDetection lossDetection(int c) {
        return lossDetections.get(tcb.hasFlag(c, F_SACK) ? tcb.lossDetectionId(c) : dupAckDetection);
    }

    /** The connection's loss recovery: its choice with SACK; RFC 6582 NewReno without. */
    LossRecovery recovery(int c) {
        return recoveries.get(tcb.hasFlag(c, F_SACK) ? tcb.recoveryId(c) : newRenoRecovery);
    }
}
