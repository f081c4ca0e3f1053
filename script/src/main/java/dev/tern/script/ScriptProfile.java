package dev.tern.script;

import dev.tern.tcp.FastOpenKeys;
import dev.tern.tcp.PushRule;
import dev.tern.tcp.SegmentChecks;
import dev.tern.tcp.ReceivePolicy;
import dev.tern.tcp.TcpConfig;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What a script may assume about the stack under test: its TCP configuration, the link MTU, the timing tolerance and
 * the system whose words the script uses. docs/SCRIPTS.md lists each profile's values. The ISN key is fixed, so a run
 * is the same every time.
 *
 * @param name        as given to {@code tern script --profile}
 * @param description one line for help and docs
 * @param tcp         the stack's TCP configuration
 * @param mtu         the link MTU (1500: MSS 1460)
 * @param toleranceNs how far from its line's time a packet Tern sends may go and still match (packetdrill's
 *                    default, 4 ms; Tern's timer wheel ticks every 1.05 ms)
 * @param tolerancePercent the tolerance grows to this share of the time since the previous line when that is more
 *                    (packetdrill's {@code --tolerance_percent}, 12.5 by default); 0 for our own scripts
 * @param tsTickUs    when above 0, a {@code >} line's TS val is compared: Tern's, less the offset its first one
 *                    fixed, may differ from the line's by as many ticks of this many µs as fit the tolerance
 *                    (packetdrill's {@code --tcp_ts_tick_usecs}); 0, the default, compares none
 * @param strictSegments a {@code >} line matches exactly one segment Tern sent, never several joined (packetdrill's
 *                    {@code --strict_segments}); off by default
 * @param strictEnd   after the script's last line, a segment Tern sent that no line expected fails the script (our
 *                    corpus's rule, {@link #corpus()} and {@link #bare()}); packetdrill does not look after its last
 *                    line, and neither do the profiles for other stacks' scripts
 * @param gsoMss      when above 0, an injected segment with more data than this is cut into segments of this much
 *                    data, as packetdrill's {@code --mss} has the kernel's GSO cut it; 0 cuts none
 * @param dialect     the system whose names the scripts use (TCP states, socket option semantics)
 * @param reportedReceiveBuffer what {@code getsockopt SO_RCVBUF} reports for a socket that did not set it, before
 *                    the dialect's rounding ({@link SocketBufferSizes}); 0: the size of Tern's ring
 * @param reportedSendBuffer the same for {@code SO_SNDBUF}
 * @param defines     the symbols the profile defines for {@code #ifdef} and for substitution, with their values (an
 *                    empty value defines a symbol for {@code #ifdef} only); the dialect's system name
 *                    ({@link ScriptDialect#systemName()}) is defined for {@code #ifdef} as well
 */
public record ScriptProfile(String name, String description, TcpConfig tcp, int mtu, long toleranceNs,
                            double tolerancePercent, long tsTickUs, boolean strictSegments, boolean strictEnd,
                            int gsoMss, ScriptDialect dialect, long reportedReceiveBuffer, long reportedSendBuffer,
                            Map<String, String> defines) {
    private static final long MS = 1_000_000L;
    /** Packetdrill's default {@code --tolerance_percent}. */
    static final double PACKETDRILL_TOLERANCE_PERCENT = 12.5;
    /**
     * Every profile's Fast Open key, fixed so cookies repeat: the one packetdrill's Linux suite sets (its {@code
     * common/defaults.sh}), so {@code TFO_COOKIE} is what a Linux server with that key gives the runner's remote.
     */
    static final FastOpenKeys FAST_OPEN_KEYS = FastOpenKeys.parse("a1a1a1a1-b2b2b2b2-c3c3c3c3-d4d4d4d4");
    /** Linux's tcp_fastopen of packetdrill's suite: client and server, on every listener (the 0x70000 are unused). */
    static final int GTESTS_FAST_OPEN = 0x70403;

    public ScriptProfile {
        defines = Map.copyOf(defines);
    }

    /**
     * Whether a run follows packetdrill's one socket under test, as the profiles for other stacks' scripts do (those
     * that do not hold a script to its end, {@link #strictEnd}): a {@code >} line without ports passes over the
     * segments of other connections, and a SYN injected after a new {@code socket} starts a connection numbered
     * afresh. Our corpus names every connection by its ports and accounts for every segment instead.
     */
    boolean followsSocketUnderTest() {
        return !strictEnd;
    }

    /** This profile with another TCP configuration. */
    ScriptProfile withTcp(TcpConfig config) {
        return new ScriptProfile(name, description, config, mtu, toleranceNs, tolerancePercent, tsTickUs,
            strictSegments, strictEnd, gsoMss, dialect, reportedReceiveBuffer, reportedSendBuffer, defines);
    }

    /** This profile with another TCP configuration and the socket buffer sizes {@code getsockopt} reports. */
    ScriptProfile withTcp(TcpConfig config, long receiveReported, long sendReported) {
        return new ScriptProfile(name, description, config, mtu, toleranceNs, tolerancePercent, tsTickUs,
            strictSegments, strictEnd, gsoMss, dialect, receiveReported, sendReported, defines);
    }

    /** This profile with the comparison and link settings of a script's option lines. */
    ScriptProfile withOptions(int newMtu, long newToleranceNs, double newTolerancePercent, long newTsTickUs,
                              boolean newStrictSegments, int newGsoMss) {
        return new ScriptProfile(name, description, tcp, newMtu, newToleranceNs, newTolerancePercent, newTsTickUs,
            newStrictSegments, strictEnd, newGsoMss, dialect, reportedReceiveBuffer, reportedSendBuffer, defines);
    }

    /** A profile for other stacks' scripts: packetdrill's comparison and Linux's names. */
    private static ScriptProfile packetdrill(String name, String description, TcpConfig tcp, Map<String, String> defines) {
        return new ScriptProfile(name, description, tcp, 1500, 4 * MS, PACKETDRILL_TOLERANCE_PERCENT, 0, false, false,
            0, ScriptDialect.LINUX, 0, 0, defines);
    }

    /** Tern's defaults with the runner's fixed ISN key. */
    private static TcpConfig.Builder tern() {
        return TcpConfig.builder().isnKey(0x7465726e, 0x73637269).fastOpenKeys(FAST_OPEN_KEYS);
    }

    /** This profile, with our corpus's strictness: no tolerance beyond the fixed one, nothing unexpected at the end. */
    private ScriptProfile strict(String newName, String newDescription) {
        return new ScriptProfile(newName, newDescription, tcp, mtu, toleranceNs, 0, tsTickUs, strictSegments, true,
            gsoMss, dialect, reportedReceiveBuffer, reportedSendBuffer, defines);
    }

    /** Tern's defaults, which follow Linux: timestamps, SACK and window scaling offered, 40 ms delayed ACK, ... */
    public static ScriptProfile linux() {
        return packetdrill("linux", "Tern's Linux-like defaults (timestamps, SACK, window scaling offered)",
            tern().build(), Map.of());
    }

    /**
     * As {@link #linux()} but Tern offers no TCP option beyond the MSS: shorter scripts for RFC 9293 basics, our own,
     * so held to the rules of {@link #corpus()}.
     */
    public static ScriptProfile bare() {
        return linux().withTcp(tern().timestamps(false).sack(false).windowScaling(false).build())
            .strict("bare", "as linux, but Tern offers only the MSS option (no timestamps, SACK, scaling); a segment "
                + "after the last line fails");
    }

    /**
     * Our corpus ({@code conformance/scripts/}): {@link #linux()}, held to more: the tolerance is the fixed one only,
     * and a segment Tern sends after the script's last line that no line expects fails the script, so that our
     * scripts say everything Tern sends.
     */
    public static ScriptProfile corpus() {
        return linux().strict("corpus", "as linux, and a segment Tern sends after the last line fails the script "
            + "(Tern's own corpus)");
    }

    /**
     * As {@link #linux()} with the settings of packetdrill's Linux test suite (its {@code common/defaults.sh}): 8 MiB
     * to receive, so that Tern (the smallest scale that covers the buffer) offers window scale 8 as Linux does there
     * (the smallest that covers tcp_rmem's maximum, 15 MiB), 256 KiB to send (tcp_wmem's default), and the window
     * kept over idle periods (tcp_slow_start_after_idle=0), Fast Open as it sets it (tcp_fastopen=0x70403 and its
     * key), ECN off (tcp_ecn=0); the symbols its {@code run_all.py} defines for IPv4 but {@code TFO_COOKIE}, which is the cookie Tern's
     * server gives the runner's remote under that key.
     */
    public static ScriptProfile gtests() {
        return packetdrill("gtests", "as linux, with the settings of packetdrill's Linux suite (window scale 8, "
                + "no slow start after idle)", tern().bufferSizes(256 << 10, 8 << 20).slowStartAfterIdle(false)
                .pushRule(PushRule.LINUX).fastOpen(GTESTS_FAST_OPEN).ecn(dev.tern.tcp.EcnMode.OFF).build(),
            Map.of("CODE", "host_unreachable", "CMSG_LEVEL_IP", "SOL_IP",
                "CMSG_TYPE_RECVERR", "IP_RECVERR"));
    }

    /**
     * FreeBSD 14's defaults, for the FreeBSD tcp-testsuite: 64 KiB to receive (net.inet.tcp.recvspace), held in a
     * ring of 128 KiB ({@link #freebsdReceiveRing}) and counted by the window in whole segments, FreeBSD's receive
     * window and ACKs ({@link ReceivePolicy#FREEBSD}: the free space offered, every second segment acknowledged, no
     * quick ACKs), 32 KiB to send (sendspace), window scale 6, the scale FreeBSD
     * offers for the largest buffer a socket may grow to (kern.ipc.maxsockbuf, 2 MiB), a delayed ACK of 100 ms
     * (net.inet.tcp.delacktime), an RTO of at most 64 s after 12 retransmissions (TCPTV_REXMTMAX, TCP_MAXRXTSHIFT),
     * keep-alive after 2 hours, every 75 s, 8 probes, a SYN with FIN to a listener answered (net.inet.tcp.drop_synfin=0),
     * Fast Open off for 900 s towards a server after a failed attempt (net.inet.tcp.fastopen.path_disable_time), a
     * SYN-ACK's text taken by every connect, ECN accepted and asked for on the first SYN retransmission too
     * (net.inet.tcp.ecn.enable=2, ecn.maxretries=1), a connection attempt ended 75 s after its first SYN
     * (net.inet.tcp.keepinit); FreeBSD's names of TCP states and its SO_RCVBUF. The rest is Tern's
     * (docs/SCRIPTS.md lists what differs).
     */
    public static ScriptProfile freebsd() {
        final TcpConfig tcp = tern().bufferSizes(32 << 10, freebsdReceiveRing(64 << 10))
            .receivePolicy(ReceivePolicy.FREEBSD.withBufferSpace(64 << 10))
            .windowScaleBufferSize(FREEBSD_MAXSOCKBUF).delayedAckNs(100 * MS)
            .rto(1_000 * MS, 200 * MS, 64_000 * MS).maxRetries(12)
            .keepalive(7_200_000 * MS, 75_000 * MS, 8)
            .segmentChecks(SegmentChecks.RFC_5961.withSynFin(SegmentChecks.SynFin.ANSWER))
            .fastOpenPathDisableNs(900_000 * MS).synSentText(TcpConfig.SynSentText.ALWAYS).ecnSynRetries(1)
            .connectTimeoutNs(75_000 * MS).synRetries(10).build();
        return new ScriptProfile("freebsd", "FreeBSD 14's defaults (its receive window and ACKs, window 64 KiB, "
            + "scale 6, delayed ACK 100 ms), for the FreeBSD tcp-testsuite", tcp, 1500, 4 * MS,
            PACKETDRILL_TOLERANCE_PERCENT, 0, false, false, 0,
            ScriptDialect.FREEBSD, 64 << 10, 32 << 10, Map.of());
    }

    /**
     * The ring that holds FreeBSD's receive buffer of {@code recvspace} bytes: FreeBSD rounds the buffer up to whole
     * segments once the peer's MSS is known (65536 becomes 65700), so Tern takes the smallest power of two above
     * it; the window Tern offers is then FreeBSD's while that is bounded by the 16-bit field (65535 unscaled).
     */
    static int freebsdReceiveRing(long recvspace) {
        return ScriptSockets.bufferSize(recvspace + 1);
    }

    /** FreeBSD's kern.ipc.maxsockbuf by default: the largest socket buffer, from which it picks its window scale. */
    static final int FREEBSD_MAXSOCKBUF = 2 << 20;

    public static List<ScriptProfile> all() {
        return List.of(linux(), bare(), gtests(), freebsd(), corpus());
    }

    public static Optional<ScriptProfile> named(String name) {
        return all().stream().filter(p -> p.name.equals(name)).findFirst();
    }

    /**
     * This profile with symbols defined as well, each {@code NAME=VALUE} or {@code NAME} (the command line's
     * {@code --define}, as packetdrill's); a bad one is an {@link IllegalArgumentException} saying which.
     */
    public ScriptProfile withDefinitions(List<String> definitions) {
        final java.util.Map<String, String> all = new java.util.HashMap<>(defines);
        for (String definition : definitions) {
            try {
                ScriptPreprocessor.define("--define", 0, definition, all);
            } catch (ScriptException e) {
                throw new IllegalArgumentException("bad definition '" + definition + "': write NAME=VALUE or NAME");
            }
        }
        return new ScriptProfile(name, description, tcp, mtu, toleranceNs, tolerancePercent, tsTickUs, strictSegments,
            strictEnd, gsoMss, dialect, reportedReceiveBuffer, reportedSendBuffer, all);
    }
}
