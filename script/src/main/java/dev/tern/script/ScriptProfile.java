package dev.tern.script;

import dev.tern.tcp.FastOpenKeys;
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
 * @param strictEnd   after the script's last line, a segment Tern sent that no line expected fails the script (our
 *                    corpus's rule, {@link #corpus()} and {@link #bare()}); packetdrill does not look after its last
 *                    line, and neither do the profiles for other stacks' scripts ({@link #linux()}, {@link #gtests()})
 */
public record ScriptProfile(String name, String description, TcpConfig tcp, int mtu, long toleranceNs, long tsTickUs,
                            boolean strictSegments, boolean strictEnd) {
    private static final long MS = 1_000_000L;
    /**
     * Every profile's Fast Open key, fixed so cookies repeat: the one packetdrill's Linux suite sets (its {@code
     * common/defaults.sh}), so {@code TFO_COOKIE} is what a Linux server with that key gives the runner's remote.
     */
    static final FastOpenKeys FAST_OPEN_KEYS = FastOpenKeys.parse("a1a1a1a1-b2b2b2b2-c3c3c3c3-d4d4d4d4");
    /** Linux's tcp_fastopen of packetdrill's suite: client and server, on every listener (the 0x70000 are unused). */
    static final int GTESTS_FAST_OPEN = 0x70403;

    /**
     * A profile with packetdrill's defaults for the comparison: no TS val check, segments joined, nothing looked at
     * after the last line.
     */
    public ScriptProfile(String name, String description, TcpConfig tcp, int mtu, long toleranceNs) {
        this(name, description, tcp, mtu, toleranceNs, 0, false, false);
    }

    /** This profile with {@code strictEnd}, under another name. */
    private ScriptProfile strictEnd(String name, String description) {
        return new ScriptProfile(name, description, tcp, mtu, toleranceNs, tsTickUs, strictSegments, true);
    }

    /** Tern's defaults, which follow Linux: timestamps, SACK and window scaling offered, 40 ms delayed ACK, ... */
    public static ScriptProfile linux() {
        return new ScriptProfile("linux", "Tern's Linux-like defaults (timestamps, SACK, window scaling offered)",
            TcpConfig.builder().isnKey(0x7465726e, 0x73637269).fastOpenKeys(FAST_OPEN_KEYS).build(), 1500, 4 * MS);
    }

    /**
     * As {@link #linux()} but Tern offers no TCP option beyond the MSS: shorter scripts for RFC 9293 basics, our own,
     * so a segment after the last line fails them as in {@link #corpus()}.
     */
    public static ScriptProfile bare() {
        return new ScriptProfile("bare", "as linux, but Tern offers only the MSS option (no timestamps, SACK, "
            + "scaling); a segment after the last line fails", TcpConfig.builder().isnKey(0x7465726e, 0x73637269)
            .fastOpenKeys(FAST_OPEN_KEYS).timestamps(false).sack(false).windowScaling(false).build(), 1500, 4 * MS, 0,
            false, true);
    }

    /**
     * Our corpus ({@code conformance/scripts/}): {@link #linux()}, and a segment Tern sends after the script's last
     * line that no line expects fails the script, so that our scripts say everything Tern sends.
     */
    public static ScriptProfile corpus() {
        return linux().strictEnd("corpus", "as linux, and a segment Tern sends after the last line fails the script "
            + "(Tern's own corpus)");
    }

    /**
     * As {@link #linux()} with the settings of packetdrill's Linux test suite (its {@code common/defaults.sh}): 8 MiB
     * to receive, so that Tern (the smallest scale that covers the buffer) offers window scale 8 as Linux does there
     * (the smallest that covers tcp_rmem's maximum, 15 MiB), 256 KiB to send (tcp_wmem's default), and the window
     * kept over idle periods (tcp_slow_start_after_idle=0), and Fast Open as it sets it (tcp_fastopen=0x70403 and
     * its key).
     */
    public static ScriptProfile gtests() {
        return new ScriptProfile("gtests", "as linux, with the settings of packetdrill's Linux suite (window scale 8, "
            + "no slow start after idle)", TcpConfig.builder().isnKey(0x7465726e, 0x73637269)
            .bufferSizes(256 << 10, 8 << 20).slowStartAfterIdle(false).fastOpen(GTESTS_FAST_OPEN)
            .fastOpenKeys(FAST_OPEN_KEYS).build(), 1500, 4 * MS);
    }

    public static List<ScriptProfile> all() {
        return List.of(linux(), bare(), gtests(), corpus());
    }

    public static Optional<ScriptProfile> named(String name) {
        return all().stream().filter(p -> p.name.equals(name)).findFirst();
    }
}
