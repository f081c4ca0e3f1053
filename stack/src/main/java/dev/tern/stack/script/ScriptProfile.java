package dev.tern.stack.script;

import dev.tern.tcp.TcpConfig;

import java.util.List;
import java.util.Optional;

/**
 * What a script may assume about the stack under test: its TCP configuration, the link MTU and the timing tolerance.
 * docs/SCRIPTS.md lists each profile's values. The ISN key is fixed, so a run is the same every time.
 *
 * @param name        as given to {@code tern script --profile}
 * @param description one line for help and docs
 * @param tcp         the stack's TCP configuration
 * @param mtu         the link MTU (1500: MSS 1460)
 * @param toleranceNs how far from its line's time a packet Tern sends may go and still match (packetdrill's
 *                    default, 4 ms; Tern's timer wheel ticks every 1.05 ms)
 * @param tsTickUs    when above 0, a {@code >} line's TS val is compared: Tern's, less the offset its first one
 *                    fixed, may differ from the line's by as many ticks of this many µs as fit the tolerance
 *                    (packetdrill's {@code --tcp_ts_tick_usecs}); 0, the default, compares none
 * @param strictSegments a {@code >} line matches exactly one segment Tern sent, never several joined (packetdrill's
 *                    {@code --strict_segments}); off by default
 */
public record ScriptProfile(String name, String description, TcpConfig tcp, int mtu, long toleranceNs, long tsTickUs,
                            boolean strictSegments) {
    private static final long MS = 1_000_000L;

    /** A profile with packetdrill's defaults for the comparison: no TS val check, segments joined. */
    public ScriptProfile(String name, String description, TcpConfig tcp, int mtu, long toleranceNs) {
        this(name, description, tcp, mtu, toleranceNs, 0, false);
    }

    /** Tern's defaults, which follow Linux: timestamps, SACK and window scaling offered, 40 ms delayed ACK, ... */
    public static ScriptProfile linux() {
        return new ScriptProfile("linux", "Tern's Linux-like defaults (timestamps, SACK, window scaling offered)",
            TcpConfig.builder().isnKey(0x7465726e, 0x73637269).build(), 1500, 4 * MS);
    }

    /** As {@link #linux()} but Tern offers no TCP option beyond the MSS: shorter scripts for RFC 9293 basics. */
    public static ScriptProfile bare() {
        return new ScriptProfile("bare", "as linux, but Tern offers only the MSS option (no timestamps, SACK, scaling)",
            TcpConfig.builder().isnKey(0x7465726e, 0x73637269).timestamps(false).sack(false).windowScaling(false)
                .build(), 1500, 4 * MS);
    }

    /**
     * As {@link #linux()} with the settings of packetdrill's Linux test suite (its {@code common/defaults.sh}): 8 MiB
     * to receive, so that Tern (the smallest scale that covers the buffer) offers window scale 8 as Linux does there
     * (the smallest that covers tcp_rmem's maximum, 15 MiB), 256 KiB to send (tcp_wmem's default), and the window
     * kept over idle periods (tcp_slow_start_after_idle=0).
     */
    public static ScriptProfile gtests() {
        return new ScriptProfile("gtests", "as linux, with the settings of packetdrill's Linux suite (window scale 8, "
            + "no slow start after idle)", TcpConfig.builder().isnKey(0x7465726e, 0x73637269)
            .bufferSizes(256 << 10, 8 << 20).slowStartAfterIdle(false).build(), 1500, 4 * MS);
    }

    public static List<ScriptProfile> all() {
        return List.of(linux(), bare(), gtests());
    }

    public static Optional<ScriptProfile> named(String name) {
        return all().stream().filter(p -> p.name.equals(name)).findFirst();
    }
}
