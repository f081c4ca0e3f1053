package dev.tern.script;

import dev.tern.tcp.ConnectionSettings;
import dev.tern.tcp.FastOpen;
import dev.tern.tcp.SegmentChecks;
import dev.tern.tcp.ReceivePolicy;
import dev.tern.tcp.TcpConfig;

import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The kernel settings and option lines of a script ({@link ScriptLine.Sysctl}) applied to its profile, Linux's
 * ({@code net.ipv4.*}) and FreeBSD's ({@code net.inet.tcp.*}, {@code kern.ipc.*}) by their meaning for Tern
 * (docs/SCRIPTS.md, "Kernel settings"). Settings before the script's first other statement make the stack's
 * configuration. A later setting that changes only what connections take when they open (the TCP settings outside
 * {@link ConnectionSettings#LAYER_WIDE}) is applied at its time through {@link dev.tern.tcp.TcpLayer#reconfigure}, as
 * Linux and FreeBSD apply a sysctl to the sockets made after it. A later setting is also taken when it changes
 * nothing, and when only settings follow it: the FreeBSD suite puts the values it changed back at a script's end, and
 * with the stack gone at the end there is nothing to put back. Anything else after the first statement (an option
 * line, a layer-wide setting) is rejected with the reason.
 */
final class ScriptSettings {
    /** The unit of {@code net.ipv4.tcp_mem}: Linux counts pages. */
    private static final long TCP_MEM_PAGE = 4096;
    private static final long MS = 1_000_000L;

    /** The Linux settings a script may make, each mapped onto {@link TcpConfig}. */
    static final List<String> LINUX = List.of("net.ipv4.tcp_syncookies", "net.ipv4.tcp_max_syn_backlog",
        "net.ipv4.tcp_sack", "net.ipv4.tcp_timestamps", "net.ipv4.tcp_window_scaling", "net.ipv4.tcp_mem",
        "net.ipv4.tcp_wmem", "net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_notsent_lowat", "net.ipv4.tcp_ecn",
        ScriptParser.FAST_OPEN_SYSCTL, ScriptParser.FAST_OPEN_KEY_SYSCTL, ScriptParser.FAST_OPEN_BLACKHOLE_SYSCTL);
    /**
     * Linux settings of what Tern does not do, taken at any value as no change. Linux's TSO settings size the
     * segments it hands the device to cut; Tern has no TSO and sends segments of the MSS, which the runner joins as
     * packetdrill joins TSO pieces, so a line expecting Linux's larger segment matches Tern's run of them.
     */
    static final List<String> LINUX_WITHOUT_EFFECT = List.of("net.ipv4.tcp_min_tso_segs",
        "net.ipv4.tcp_tso_win_divisor");
    /** The settings written as three numbers between quotes (Linux's min/default/max or low/pressure/high). */
    private static final List<String> THREE_NUMBERS = List.of("net.ipv4.tcp_mem", "net.ipv4.tcp_wmem");
    /** The FreeBSD settings mapped onto {@link TcpConfig}. */
    static final List<String> FREEBSD = List.of("net.inet.tcp.rfc1323", "net.inet.tcp.sack.enable",
        "net.inet.tcp.recvspace", "net.inet.tcp.sendspace", "kern.ipc.maxsockbuf", "net.inet.tcp.delacktime",
        "net.inet.tcp.rexmit_initial", "net.inet.tcp.msl", "net.inet.tcp.keepidle", "net.inet.tcp.keepintvl",
        "net.inet.tcp.keepcnt", "net.inet.tcp.syncookies", "net.inet.tcp.initcwnd_segments",
        "net.inet.tcp.hostcache.purgenow", "net.inet.tcp.fastopen.client_enable",
        "net.inet.tcp.fastopen.server_enable", "net.inet.tcp.insecure_rst", "net.inet.tcp.insecure_syn",
        "net.inet.tcp.drop_synfin", "net.inet.tcp.delayed_ack", "net.inet.tcp.fastopen.path_disable_time",
        "net.inet.tcp.ecn.enable", "net.inet.tcp.ecn.maxretries", "net.inet.tcp.keepinit");
    /**
     * FreeBSD settings Tern has no knob for, taken at the value that describes what Tern does (FreeBSD's default,
     * which the {@code freebsd} profile stands for), each with what Tern does; another value is rejected.
     */
    static final Map<String, Fixed> FREEBSD_FIXED = Map.ofEntries(
        Map.entry("net.inet.tcp.blackhole", new Fixed("Tern answers a segment to a closed port with a RST", 0)),
        Map.entry("net.inet.tcp.rexmit_min", new Fixed("Tern's RTO has a floor of 200 ms (FreeBSD: 30 ms, plus "
            + "rexmit_slop)", 30)),
        Map.entry("net.inet.tcp.rexmit_slop", new Fixed("Tern's RTO has a floor of 200 ms and no slop added", 200)),
        Map.entry("net.inet.tcp.rexmit_drop_options", new Fixed("Tern keeps its options in a retransmitted SYN", 0)),
        Map.entry("net.inet.tcp.syncookies_only", new Fixed("Tern sends cookies only when the SYN queue is full", 0)),
        Map.entry("net.inet.tcp.icmp_may_rst", new Fixed("Tern ends a connection attempt on an ICMP error about it",
            1)),
        Map.entry("net.inet.tcp.udp_tunneling_port", new Fixed("Tern has no TCP over UDP (FreeBSD's "
            + "udp_tunneling)", 0)),
        Map.entry("net.inet.tcp.udp_tunneling_overhead", new Fixed("Tern has no TCP over UDP", 8)));

    /** A setting Tern has no knob for: what Tern does, and the values that say so. */
    record Fixed(String behaviour, long... values) {
        boolean takes(long value) {
            for (long v : values) {
                if (v == value) {
                    return true;
                }
            }
            return false;
        }
    }

    private ScriptSettings() {
    }

    /** Whether a name is a setting a script may make (a sysctl Tern reads, or an option line). */
    static boolean known(String name) {
        return LINUX.contains(name) || LINUX_WITHOUT_EFFECT.contains(name) || FREEBSD.contains(name)
            || FREEBSD_FIXED.containsKey(name) || name.startsWith("--");
    }

    /** How many numbers a setting takes; 0 where its reading checked them (a Fast Open key: 4, or 8 with a backup). */
    static int arity(String name) {
        return name.equals(ScriptParser.FAST_OPEN_KEY_SYSCTL) ? 0 : THREE_NUMBERS.contains(name) ? 3 : 1;
    }

    /**
     * The profile the stack is built with, and the settings applied while the script runs: each one's profile from its
     * line on (the runner hands its TCP configuration to the stack at the line's time).
     */
    record Applied(ScriptProfile profile, Map<ScriptLine.Sysctl, ScriptProfile> live) {
    }

    /** The profile with the script's leading settings applied, and its later ones as the class says. */
    static Applied apply(String file, List<ScriptLine> lines, ScriptProfile profile) {
        int lastStatement = -1;
        for (int i = 0; i < lines.size(); i++) {
            if (!(lines.get(i) instanceof ScriptLine.Sysctl)) {
                lastStatement = i;
            }
        }
        final Map<ScriptLine.Sysctl, ScriptProfile> live = new IdentityHashMap<>();
        ScriptProfile built = profile;
        ScriptProfile current = profile;
        boolean leading = true;
        for (int i = 0; i < lines.size(); i++) {
            if (!(lines.get(i) instanceof ScriptLine.Sysctl setting)) {
                leading = false;
                continue;
            }
            final ScriptProfile next = apply(file, setting, current);
            if (leading) {
                built = next;
                current = next;
            } else if (!next.equals(current) && i < lastStatement) {
                final List<String> fixed = ConnectionSettings.changedLayerWide(current.tcp(), next.tcp());
                if (setting.name().startsWith("--") || !fixed.isEmpty() || !next.withTcp(current.tcp()).equals(current)) {
                    throw new ScriptException(file, setting.line(), (setting.name().startsWith("--") ? "option line "
                        : "sysctl ") + setting.name() + " changes Tern's configuration after the script has started "
                        + "in what is fixed once the stack runs (" + (fixed.isEmpty() ? "the runner's options"
                        : String.join(", ", fixed)) + "); a later setting may change only what connections take when "
                        + "they open, or come at the end of the script, where nothing follows it");
                }
                live.put(setting, next);
                current = next;
            }
        }
        return new Applied(built, live);
    }

    private static ScriptProfile apply(String file, ScriptLine.Sysctl setting, ScriptProfile profile) {
        final String name = setting.name();
        final long v = setting.value();
        if (name.startsWith("--")) {
            return option(setting, profile);
        }
        if (LINUX_WITHOUT_EFFECT.contains(name)) {
            return profile;
        }
        final Fixed fixed = FREEBSD_FIXED.get(name);
        if (fixed != null) {
            if (!fixed.takes(v)) {
                throw new ScriptException(file, setting.line(), "sysctl " + name + "=" + v + " is not supported: "
                    + fixed.behaviour() + " (taken: " + name + "=" + joined(fixed.values()) + ")");
            }
            return profile;
        }
        final TcpConfig before = profile.tcp();
        final TcpConfig.Builder tcp = before.toBuilder();
        switch (name) {
            // Linux's 2 ("cookies always") has no Tern counterpart: Tern sends cookies only when the SYN queue is
            // full; tcp_max_syn_backlog bounds that queue. FreeBSD's 1 is the same "when the syncache is full".
            case "net.ipv4.tcp_syncookies", "net.inet.tcp.syncookies" -> {
                if (v < 0 || v > 1) {
                    throw new ScriptException(file, setting.line(), name + "=" + v + " is not supported: Tern "
                        + "sends cookies only when the SYN queue is full (0 or 1; bound the queue with "
                        + "net.ipv4.tcp_max_syn_backlog)");
                }
                tcp.synCookies(v == 1);
            }
            case "net.ipv4.tcp_max_syn_backlog" -> tcp.synQueueSize((int) Math.clamp(v, 1, 1 << 20));
            case "net.ipv4.tcp_sack", "net.inet.tcp.sack.enable" -> tcp.sack(v != 0);
            // RFC 3168 ECN: 0 off, 1 ask and accept, 2 accept only, the same on Linux and FreeBSD (dev.tern.tcp.EcnMode).
            // Linux's 3 to 5 and FreeBSD's 3 and 4 are Accurate ECN, which Tern does not have.
            case "net.ipv4.tcp_ecn", "net.inet.tcp.ecn.enable" -> {
                final dev.tern.tcp.EcnMode mode = dev.tern.tcp.EcnMode.ofLinux(v);
                if (mode == null) {
                    throw new ScriptException(file, setting.line(), "sysctl " + name + "=" + v + " is not supported: "
                        + "Tern has RFC 3168 ECN only (0 off, 1 ask and accept, 2 accept only), not Accurate ECN");
                }
                tcp.ecn(mode);
            }
            // FreeBSD's SYN retransmissions that still ask for ECN (Linux's first one goes plain).
            case "net.inet.tcp.ecn.maxretries" -> tcp.ecnSynRetries((int) Math.clamp(v, 0, 255));
            case "net.ipv4.tcp_timestamps" -> tcp.timestamps(v != 0);
            case "net.ipv4.tcp_window_scaling" -> tcp.windowScaling(v != 0);
            // FreeBSD's rfc1323: 0 neither, 1 both window scaling and timestamps, 2 scaling only, 3 timestamps only.
            case "net.inet.tcp.rfc1323" -> {
                if (v < 0 || v > 3) {
                    throw new ScriptException(file, setting.line(), name + " takes 0 to 3, not " + v);
                }
                tcp.windowScaling(v == 1 || v == 2).timestamps(v == 1 || v == 3);
            }
            // Linux's three page counts (low, pressure, high) become the budget's pressure mark and limit, in
            // 4 KiB pages; low has no counterpart: Tern's pressure ends below seven eighths of the mark
            // (docs/TCP.md, "Open connections under pressure").
            case "net.ipv4.tcp_mem" -> {
                final long pressure = setting.values()[1];
                final long high = setting.values()[2];
                if (pressure < 1 || high < pressure || high > 1L << 40) {
                    throw new ScriptException(file, setting.line(), "tcp_mem needs 0 < pressure <= high (pages), "
                        + "got " + pressure + " and " + high);
                }
                tcp.memoryLimits(pressure * TCP_MEM_PAGE, high * TCP_MEM_PAGE);
            }
            // Linux's min, default and max send buffer: the default is what a new socket gets (Tern's buffer
            // does not grow, so the max has no counterpart); rounded up to a power of two as SO_SNDBUF is.
            case "net.ipv4.tcp_wmem" -> tcp.sendBufferSize(ScriptSockets.bufferSize(setting.values()[1]));
            case "net.ipv4.tcp_slow_start_after_idle" -> tcp.slowStartAfterIdle(v != 0);
            // Linux's unsigned mark; 4294967295, its default, and anything from 2^31 is no mark.
            case "net.ipv4.tcp_notsent_lowat" -> tcp.notsentLowat(v <= 0 || v > Integer.MAX_VALUE ? 0 : (int) v);
            // Linux's bits (dev.tern.tcp.FastOpen): 0x1 client, 0x2 server, 0x4 client without cookie, 0x200
            // server without cookie, 0x400 every listener; others (defaults.sh's 0x70000) mean nothing to Tern.
            case ScriptParser.FAST_OPEN_SYSCTL -> tcp.fastOpen((int) v);
            case ScriptParser.FAST_OPEN_KEY_SYSCTL -> tcp.fastOpenKeys(dev.tern.tcp.FastOpenKeys.ofWords(setting.values()));
            case ScriptParser.FAST_OPEN_BLACKHOLE_SYSCTL -> {
                if (v != 0) {
                    throw new ScriptException(file, setting.line(), "tcp_fastopen_blackhole_timeout_sec=" + v + " is "
                        + "not supported: Tern has no Fast Open blackhole detection (only 0, Linux's default)");
                }
            }
            // The ring holds the buffer; the window counts it as FreeBSD does, rounded up to whole segments, where
            // the profile's receive policy counts a buffer of its own size (ReceivePolicy.bufferSpace).
            case "net.inet.tcp.recvspace" -> {
                final ReceivePolicy policy = before.receivePolicy();
                tcp.receiveBufferSize(ScriptProfile.freebsdReceiveRing(v));
                if (policy.bufferSpace() > 0) {
                    tcp.receivePolicy(policy.withBufferSpace((int) Math.min(v, TcpConfig.MAX_BUFFER)));
                }
                return profile.withTcp(tcp.build(), v, profile.reportedSendBuffer());
            }
            case "net.inet.tcp.sendspace" -> {
                return profile.withTcp(tcp.sendBufferSize(ScriptSockets.bufferSize(v)).build(),
                    profile.reportedReceiveBuffer(), v);
            }
            case "kern.ipc.maxsockbuf" -> tcp.windowScaleBufferSize((int) Math.clamp(v, 0, TcpConfig.MAX_BUFFER));
            case "net.inet.tcp.delacktime" -> tcp.delayedAckNs(milliseconds(file, setting, 0, 500) * MS);
            // FreeBSD's switch of the delayed ACK: off, every segment is acknowledged at once; on, the profile's
            // rule (FreeBSD's every second segment where it was off).
            case "net.inet.tcp.delayed_ack" -> {
                if (v != 0 && v != 1) {
                    throw new ScriptException(file, setting.line(), name + " takes 0 or 1, not " + v);
                }
                final ReceivePolicy policy = before.receivePolicy();
                final boolean off = policy.acks() == ReceivePolicy.AckRule.EVERY_SEGMENT;
                tcp.receivePolicy(v == 0 ? policy.withAcks(ReceivePolicy.AckRule.EVERY_SEGMENT)
                    : off ? policy.withAcks(ReceivePolicy.AckRule.SECOND_SEGMENT) : policy);
            }
            case "net.inet.tcp.rexmit_initial" -> tcp.rto(Math.max(before.rtoMinNs(),
                milliseconds(file, setting, 1, 120_000) * MS), before.rtoMinNs(), before.rtoMaxNs());
            case "net.inet.tcp.msl" -> tcp.mslNs(milliseconds(file, setting, 0, 600_000) * MS);
            // The connection-attempt timeout new connects take (TcpConfig.connectTimeoutNs; TCP_KEEPINIT per socket).
            case "net.inet.tcp.keepinit" -> tcp.connectTimeoutNs(milliseconds(file, setting, 1, Integer.MAX_VALUE) * MS);
            case "net.inet.tcp.keepidle" -> tcp.keepalive(milliseconds(file, setting, 1, Integer.MAX_VALUE) * MS,
                before.keepaliveIntervalNs(), before.keepaliveProbes());
            case "net.inet.tcp.keepintvl" -> tcp.keepalive(before.keepaliveIdleNs(),
                milliseconds(file, setting, 1, Integer.MAX_VALUE) * MS, before.keepaliveProbes());
            case "net.inet.tcp.keepcnt" -> tcp.keepalive(before.keepaliveIdleNs(), before.keepaliveIntervalNs(),
                (int) Math.clamp(v, 1, 127));
            case "net.inet.tcp.initcwnd_segments" -> tcp.initialCwndSegments((int) Math.clamp(v, 1, 1024));
            // A fresh stack caches nothing about other hosts: there is nothing to purge.
            case "net.inet.tcp.hostcache.purgenow" -> {
            }
            // FreeBSD's Fast Open switches, as Linux's client and server bits (dev.tern.tcp.FastOpen). A listener
            // still takes Fast Open only with TCP_FASTOPEN, on FreeBSD as on Linux. Turning the client off and on
            // again, as the suite does first, empties FreeBSD's cookie cache: a fresh stack's is empty.
            case "net.inet.tcp.fastopen.client_enable" -> tcp.fastOpen(v != 0 ? before.fastOpen() | FastOpen.CLIENT
                : before.fastOpen() & ~FastOpen.CLIENT);
            case "net.inet.tcp.fastopen.server_enable" -> tcp.fastOpen(v != 0 ? before.fastOpen() | FastOpen.SERVER
                : before.fastOpen() & ~FastOpen.SERVER);
            // FreeBSD's switches back to RFC 793's checks (dev.tern.tcp.SegmentChecks): any RST in the window resets,
            // a SYN in the window resets; drop_synfin drops SYN+FIN in every state, and 0 answers it at a listener.
            case "net.inet.tcp.insecure_rst" -> tcp.segmentChecks(before.segmentChecks().withInWindowResets(v != 0));
            case "net.inet.tcp.insecure_syn" -> tcp.segmentChecks(before.segmentChecks().withInWindowSyns(v != 0));
            case "net.inet.tcp.drop_synfin" -> tcp.segmentChecks(before.segmentChecks().withSynFin(v != 0
                ? SegmentChecks.SynFin.DROP : SegmentChecks.SynFin.ANSWER));
            // Seconds a failed Fast Open turns the client's Fast Open off towards that server; 0 never, as Linux.
            case "net.inet.tcp.fastopen.path_disable_time" -> {
                if (v < 0 || v > Integer.MAX_VALUE) {
                    throw new ScriptException(file, setting.line(), name + " takes 0 to " + Integer.MAX_VALUE
                        + " seconds, not " + v);
                }
                tcp.fastOpenPathDisableNs(v * 1_000 * MS);
            }
            default -> throw new IllegalStateException("the parser lets only known settings through: " + name);
        }
        return profile.withTcp(tcp.build());
    }

    /**
     * An option line: the comparison's tolerance, TS tick, segment joining, the link's MTU and GSO size (the addresses
     * are {@link ScriptAddresses}').
     */
    private static ScriptProfile option(ScriptLine.Sysctl option, ScriptProfile p) {
        final long v = option.value();
        return switch (option.name()) {
            case ScriptParser.TOLERANCE_OPTION -> p.withOptions(p.mtu(), v * 1_000, p.tolerancePercent(),
                p.tsTickUs(), p.strictSegments(), p.gsoMss());
            case ScriptParser.TOLERANCE_PERCENT_OPTION -> p.withOptions(p.mtu(), p.toleranceNs(), v / 1000.0,
                p.tsTickUs(), p.strictSegments(), p.gsoMss());
            case ScriptParser.TS_TICK_OPTION -> p.withOptions(p.mtu(), p.toleranceNs(), p.tolerancePercent(), v,
                p.strictSegments(), p.gsoMss());
            case ScriptParser.STRICT_SEGMENTS_OPTION -> p.withOptions(p.mtu(), p.toleranceNs(), p.tolerancePercent(),
                p.tsTickUs(), true, p.gsoMss());
            case ScriptParser.MTU_OPTION -> p.withOptions((int) v, p.toleranceNs(), p.tolerancePercent(), p.tsTickUs(),
                p.strictSegments(), p.gsoMss());
            case ScriptParser.MSS_OPTION -> p.withOptions(p.mtu(), p.toleranceNs(), p.tolerancePercent(), p.tsTickUs(),
                p.strictSegments(), (int) v);
            // The wire's addresses, not the stack's configuration: ScriptAddresses reads them.
            case ScriptAddresses.LOCAL_OPTION, ScriptAddresses.REMOTE_OPTION, ScriptAddresses.GATEWAY_OPTION,
                 ScriptAddresses.NETMASK_OPTION, ScriptParser.IP_VERSION_OPTION -> p;
            default -> throw new IllegalStateException("the parser lets only known options through: " + option.name());
        };
    }

    private static long milliseconds(String file, ScriptLine.Sysctl setting, long min, long max) {
        final long v = setting.value();
        if (v < min || v > max) {
            throw new ScriptException(file, setting.line(), setting.name() + " takes milliseconds from " + min + " to "
                + max + ", not " + v);
        }
        return v;
    }

    private static String joined(long[] values) {
        final StringBuilder text = new StringBuilder();
        for (long v : values) {
            text.append(text.isEmpty() ? "" : " or ").append(v);
        }
        return text.toString();
    }
}
