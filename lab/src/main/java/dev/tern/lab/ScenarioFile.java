package dev.tern.lab;

import dev.tern.lab.link.LabInputException;
import dev.tern.lab.link.LinkRate;
import dev.tern.lab.link.LossModel;
import dev.tern.lab.link.Outages;
import dev.tern.lab.link.QueueLimit;
import dev.tern.tcp.CongestionControlCatalog;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Reads a scenario file (docs/LAB.md): {@code key = value} lines for the bottleneck, then one {@code [flow]} section
 * per kind of flow. {@code #} starts a comment. Any error is one {@link LabInputException} {@code FILE:LINE: reason},
 * raised before anything runs. Cold path.
 */
public final class ScenarioFile {
    static final int MIN_QUEUE_BYTES = 1514;
    private static final Set<String> SCENARIO_KEYS = Set.of("name", "seed", "duration", "rate", "trace", "delay",
        "forward_delay", "reverse_delay", "queue", "discipline", "ecn", "mark_threshold", "target", "interval", "loss",
        "gilbert", "outage", "flows", "quantum", "tupdate", "alpha", "beta", "max_burst", "mark_probability",
        "coupling", "l4s_threshold", "l4s_range", "l4s_min_packets", "tshift", "classify");
    /** The disciplines each tuning key applies to; a key set for another discipline is an error at its line. */
    private static final Map<String, List<String>> TUNING_KEYS = Map.ofEntries(
        Map.entry("interval", List.of("codel", "fq_codel")), Map.entry("flows", List.of("fq_codel")),
        Map.entry("quantum", List.of("fq_codel")), Map.entry("tupdate", List.of("pie", "dualpi2")),
        Map.entry("alpha", List.of("pie", "dualpi2")), Map.entry("beta", List.of("pie", "dualpi2")),
        Map.entry("max_burst", List.of("pie")), Map.entry("mark_probability", List.of("pie")),
        Map.entry("coupling", List.of("dualpi2")), Map.entry("l4s_threshold", List.of("dualpi2")),
        Map.entry("l4s_range", List.of("dualpi2")), Map.entry("l4s_min_packets", List.of("dualpi2")),
        Map.entry("tshift", List.of("dualpi2")), Map.entry("classify", List.of("dualpi2")),
        Map.entry("target", List.of("codel", "fq_codel", "pie", "dualpi2")),
        Map.entry("mark_threshold", List.of("droptail")));
    private static final Set<String> FLOW_KEYS = Set.of("cc", "count", "ecn", "start", "bytes", "duration",
        "access_delay");
    private static final Set<String> UDP_KEYS = Set.of("rate", "size", "start", "duration", "ecn");

    private final String file;
    private final Path directory;
    private int line;

    private String name;
    private long seed = 1;
    private long durationNs = 10_000_000_000L;
    private Supplier<LinkRate> rate;
    private String rateText;
    private long forwardDelayNs = 10_000_000L;
    private long reverseDelayNs = 10_000_000L;
    private QueueLimit queue = QueueLimit.ofBytes(100_000);
    private String discipline = "droptail";
    private boolean aqmEcn;
    private QueueLimit markThreshold;
    private Long targetNs;
    private long intervalNs = 100_000_000L;
    /** The tuning keys set, each with its line, and their values (cold path: boxed). */
    private final Map<String, Integer> tuningLines = new HashMap<>();
    private final Map<String, Object> tuning = new HashMap<>();
    private int ecnLine;
    private Supplier<LossModel> loss = LossModel::none;
    private String lossText = "none";
    private final List<long[]> outages = new ArrayList<>();
    private final List<FlowSpec> flows = new ArrayList<>();
    private final List<UdpSpec> udp = new ArrayList<>();
    /** The [udp] section being read: its line, and its values (rate 0 until set). */
    private int udpLine;
    private long udpRate;
    private int udpSize;
    private long udpStart;
    private long udpDuration;
    private int udpEcn;

    private ScenarioFile(String file, Path directory) {
        this.file = file;
        this.directory = directory;
    }

    public static ScenarioSpec read(Path path) {
        final List<String> lines;
        try {
            lines = Files.readAllLines(path);
        } catch (IOException e) {
            throw new LabInputException(path + ": cannot read: " + e.getMessage());
        }
        final Path parent = path.toAbsolutePath().getParent();
        return parse(path.toString(), parent, lines);
    }

    /** Parses {@code lines} named {@code file} in messages; trace files are looked up in {@code directory}. */
    public static ScenarioSpec parse(String file, Path directory, List<String> lines) {
        return new ScenarioFile(file, directory).parse(lines);
    }

    private ScenarioSpec parse(List<String> lines) {
        String cc = null;
        boolean ecn = false;
        int count = 1;
        long start = 0;
        long bytes = 0;
        long duration = 0;
        long access = 0;
        boolean inFlow = false;
        boolean inUdp = false;
        int flowLine = 0;
        for (int i = 0; i <= lines.size(); i++) {
            line = i + 1;
            final String text = i == lines.size() ? "[end]" : strip(lines.get(i));
            if (text.isEmpty()) {
                continue;
            }
            if (text.startsWith("[")) {
                if (inFlow) {
                    final int at = line;
                    line = flowLine;
                    if (cc == null) {
                        throw error("[flow] needs cc =");
                    }
                    for (int k = 0; k < count; k++) {
                        flows.add(new FlowSpec(cc, ecn, start, bytes, duration, access));
                    }
                    line = at;
                }
                if (inUdp) {
                    endUdp();
                }
                if (text.equals("[end]") && i == lines.size()) {
                    break;
                }
                inFlow = false;
                inUdp = text.equals("[udp]");
                if (inUdp) {
                    startUdp();
                    continue;
                }
                if (!text.equals("[flow]")) {
                    throw error("unknown section " + text + " (valid: [flow], [udp])");
                }
                inFlow = true;
                flowLine = line;
                cc = null;
                ecn = false;
                count = 1;
                start = 0;
                bytes = 0;
                duration = 0;
                access = 0;
                continue;
            }
            final int eq = text.indexOf('=');
            if (eq < 0) {
                throw error("expected key = value, got '" + text + "'");
            }
            final String key = text.substring(0, eq).strip().toLowerCase(Locale.ROOT);
            final String value = text.substring(eq + 1).strip();
            if (value.isEmpty()) {
                throw error(key + " has no value");
            }
            if (inUdp) {
                udpKey(key, value);
                continue;
            }
            if (inFlow) {
                if (!FLOW_KEYS.contains(key)) {
                    throw error("unknown key '" + key + "' in [flow] (valid: " + String.join(", ", sorted(FLOW_KEYS)) + ")");
                }
                switch (key) {
                    case "cc" -> cc = congestionControl(value);
                    case "count" -> count = (int) Math.clamp(number(key, value), 1, 1000);
                    case "ecn" -> ecn = onOff(key, value);
                    case "start" -> start = durationNs(key, value);
                    case "bytes" -> bytes = bytes(key, value);
                    case "duration" -> duration = durationNs(key, value);
                    default -> access = durationNs(key, value);
                }
                continue;
            }
            if (!SCENARIO_KEYS.contains(key)) {
                throw error("unknown key '" + key + "' (valid: " + String.join(", ", sorted(SCENARIO_KEYS)) + ", or a [flow])");
            }
            scenarioKey(key, value);
            if (TUNING_KEYS.containsKey(key)) {
                tuningLines.put(key, line);
            }
        }
        if (rate == null) {
            line = Math.max(1, lines.size());
            throw error("no rate = or trace = for the bottleneck");
        }
        if (flows.isEmpty()) {
            line = Math.max(1, lines.size());
            throw error("no [flow] section");
        }
        final long[] starts = new long[outages.size()];
        final long[] lengths = new long[outages.size()];
        for (int i = 0; i < starts.length; i++) {
            starts[i] = outages.get(i)[0];
            lengths[i] = outages.get(i)[1];
        }
        final DisciplineSpec spec = discipline();
        final String scenarioName = name != null ? name : Path.of(file).getFileName().toString().replaceFirst("\\.lab$", "");
        return new ScenarioSpec(scenarioName, seed, durationNs, rate, rateText, forwardDelayNs, reverseDelayNs, queue,
            spec, loss, lossText, () -> new Outages(starts, lengths), flows, udp);
    }

    private void startUdp() {
        udpLine = line;
        udpRate = 0;
        udpSize = UdpSpec.MAX_FRAME;
        udpStart = 0;
        udpDuration = 0;
        udpEcn = 0;
    }

    private void udpKey(String key, String value) {
        if (!UDP_KEYS.contains(key)) {
            throw error("unknown key '" + key + "' in [udp] (valid: " + String.join(", ", sorted(UDP_KEYS)) + ")");
        }
        switch (key) {
            case "rate" -> udpRate = bitsPerSecond(key, value);
            case "size" -> udpSize = (int) within(key, value.chars().allMatch(Character::isDigit) ? number(key, value)
                : bytes(key, value), UdpSpec.MIN_FRAME, UdpSpec.MAX_FRAME);
            case "start" -> udpStart = durationNs(key, value);
            case "duration" -> udpDuration = durationNs(key, value);
            default -> udpEcn = switch (value) {
                case "off", "not-ect" -> 0;
                case "ect1" -> 1;
                case "ect0" -> 2;
                default -> throw error("ecn in [udp] is not-ect, ect0 or ect1, got '" + value + "'");
            };
        }
    }

    private void endUdp() {
        if (udpRate == 0) {
            final int at = line;
            line = udpLine;
            final LabInputException missing = error("[udp] needs rate =");
            line = at;
            throw missing;
        }
        udp.add(new UdpSpec(udpRate, udpSize, udpStart, udpDuration, udpEcn));
    }

    /** The discipline with its defaults and the tuning keys set, each checked against the discipline chosen. */
    private DisciplineSpec discipline() {
        for (Map.Entry<String, Integer> set : tuningLines.entrySet()) {
            final List<String> applies = TUNING_KEYS.get(set.getKey());
            if (!applies.contains(discipline)) {
                line = set.getValue();
                throw error(set.getKey() + " applies to " + String.join(", ", applies) + ", not to " + discipline);
            }
        }
        if (aqmEcn && discipline.equals("dualpi2")) {
            line = ecnLine;
            throw error("ecn does not apply to dualpi2, which marks ECN-capable packets always");
        }
        final long target = targetNs != null ? targetNs : DisciplineSpec.defaultTargetNs(discipline);
        final DisciplineSpec.Tuning d = DisciplineSpec.Tuning.defaults(discipline, target);
        final DisciplineSpec.Tuning t = new DisciplineSpec.Tuning((int) tuned("flows", d.flows()),
            (int) tuned("quantum", d.quantum()), (long) tuned("tupdate", d.updateNs()), (double) tuned("alpha", d.alpha()),
            (double) tuned("beta", d.beta()), (long) tuned("max_burst", d.maxBurstNs()),
            (double) tuned("mark_probability", d.markProbability()), (double) tuned("coupling", d.coupling()),
            (long) tuned("l4s_threshold", d.l4sThresholdNs()), (long) tuned("l4s_range", d.l4sRangeNs()),
            (int) tuned("l4s_min_packets", d.l4sMinPackets()), (long) tuned("tshift", d.tShiftNs()),
            (boolean) tuned("classify", d.anyEct()));
        return new DisciplineSpec(discipline, target, intervalNs, aqmEcn, markThreshold, t);
    }

    private Object tuned(String key, Object fallback) {
        return tuning.getOrDefault(key, fallback);
    }

    private void scenarioKey(String key, String value) {
        switch (key) {
            case "name" -> name = value;
            case "seed" -> seed = number(key, value);
            case "duration" -> {
                durationNs = durationNs(key, value);
                if (durationNs == 0) {
                    throw error("duration must be positive");
                }
            }
            case "rate" -> {
                final long bps = bitsPerSecond(key, value);
                rate = () -> LinkRate.constant(bps);
                rateText = value;
            }
            case "trace" -> {
                final Path trace = directory == null ? Path.of(value) : directory.resolve(value);
                final LinkRate checked;
                try {
                    checked = LinkRate.readTrace(trace);
                } catch (IOException e) {
                    throw error("cannot read trace " + trace + ": " + e.getMessage());
                }
                rate = checked::fresh;
                rateText = "trace " + value;
            }
            case "delay" -> {
                forwardDelayNs = durationNs(key, value);
                reverseDelayNs = forwardDelayNs;
            }
            case "forward_delay" -> forwardDelayNs = durationNs(key, value);
            case "reverse_delay" -> reverseDelayNs = durationNs(key, value);
            case "queue" -> {
                queue = limit(key, value);
                if (queue.bytes() > 0 && queue.bytes() < MIN_QUEUE_BYTES) {
                    throw error("queue " + value + " is smaller than one frame (" + MIN_QUEUE_BYTES + " bytes)");
                }
            }
            case "discipline" -> {
                if (!DisciplineSpec.NAMES.contains(value)) {
                    throw error("unknown discipline '" + value + "' (valid: " + String.join(", ", DisciplineSpec.NAMES) + ")");
                }
                discipline = value;
            }
            case "ecn" -> {
                aqmEcn = onOff(key, value);
                ecnLine = line;
            }
            case "mark_threshold" -> markThreshold = limit(key, value);
            case "target" -> targetNs = positive(key, durationNs(key, value));
            case "interval" -> intervalNs = positive(key, durationNs(key, value));
            case "flows" -> tuning.put(key, (int) within(key, number(key, value), 1, 65536));
            case "quantum" -> tuning.put(key, (int) within(key, value.chars().allMatch(Character::isDigit)
                ? number(key, value) : bytes(key, value), 1, 1 << 20));
            case "tupdate" -> tuning.put(key, positive(key, durationNs(key, value)));
            case "max_burst", "l4s_threshold", "l4s_range", "tshift" -> tuning.put(key, durationNs(key, value));
            case "alpha", "beta" -> tuning.put(key, decimal(key, value, false));
            case "coupling" -> tuning.put(key, decimal(key, value, true));
            case "mark_probability" -> tuning.put(key, probability(key, value));
            case "l4s_min_packets" -> tuning.put(key, (int) within(key, number(key, value), 0, 1 << 20));
            case "classify" -> tuning.put(key, switch (value) {
                case "ect1" -> false;
                case "any_ect" -> true;
                default -> throw error("classify is ect1 or any_ect, got '" + value + "'");
            });
            case "loss" -> {
                final double p = probability(key, value);
                
                loss = () -> LossModel.bernoulli(p, this.seed * 31 + 7);
                lossText = "bernoulli " + value;
            }
            case "gilbert" -> {
                final String[] parts = value.split("\\s+");
                if (parts.length != 4) {
                    throw error("gilbert takes four probabilities: p r loss_good loss_bad");
                }
                final double p = probability(key, parts[0]);
                final double r = probability(key, parts[1]);
                final double good = probability(key, parts[2]);
                final double bad = probability(key, parts[3]);
                
                loss = () -> LossModel.gilbertElliott(p, r, good, bad, this.seed * 31 + 7);
                lossText = "gilbert " + value;
            }
            default -> {
                final String[] parts = value.split("\\s+");
                if (parts.length != 2) {
                    throw error("outage takes a start and a length, e.g. outage = 2s 500ms");
                }
                final long startNs = durationNs(key, parts[0]);
                final long lengthNs = positive(key, durationNs(key, parts[1]));
                if (!outages.isEmpty() && startNs < outages.getLast()[0] + outages.getLast()[1]) {
                    throw error("outages must be in order and not overlap");
                }
                outages.add(new long[] {startNs, lengthNs});
            }
        }
    }

    private String congestionControl(String value) {
        try {
            CongestionControlCatalog.ofContext().resolve(value);
        } catch (IllegalArgumentException e) {
            throw error(e.getMessage());
        }
        return value;
    }

    private long number(String key, String value) {
        try {
            final long n = Long.parseLong(value);
            if (n < 0) {
                throw error(key + " must not be negative, got " + value);
            }
            return n;
        } catch (NumberFormatException e) {
            throw error(key + ": not a number: '" + value + "'");
        }
    }

    private long within(String key, long value, long min, long max) {
        if (value < min || value > max) {
            throw error(key + " must be between " + min + " and " + max + ", got " + value);
        }
        return value;
    }

    /** A plain decimal number such as 0.125; {@code positive}: above zero, else at least zero. */
    private double decimal(String key, String value, boolean positive) {
        final double d;
        try {
            d = Double.parseDouble(value);
        } catch (NumberFormatException e) {
            throw error(key + ": not a number: '" + value + "'");
        }
        if (!Double.isFinite(d) || (positive ? d <= 0 : d < 0)) {
            throw error(key + " must be " + (positive ? "positive" : "at least 0") + ", got " + value);
        }
        return d;
    }

    private long positive(String key, long value) {
        if (value <= 0) {
            throw error(key + " must be positive");
        }
        return value;
    }

    private boolean onOff(String key, String value) {
        return switch (value) {
            case "on", "true", "yes" -> true;
            case "off", "false", "no" -> false;
            default -> throw error(key + " is on or off, got '" + value + "'");
        };
    }

    private double probability(String key, String value) {
        final double p;
        try {
            p = value.endsWith("%") ? Double.parseDouble(value.substring(0, value.length() - 1)) / 100
                : Double.parseDouble(value);
        } catch (NumberFormatException e) {
            throw error(key + ": not a probability: '" + value + "'");
        }
        if (!(p >= 0 && p <= 1)) {
            throw error(key + " must be between 0 and 1 (or 0% and 100%), got " + value);
        }
        return p;
    }

    /** 10s, 5ms, 250us, 40ns. */
    private long durationNs(String key, String value) {
        return scaled(key, value, new String[] {"ms", "us", "ns", "s"},
            new long[] {1_000_000L, 1_000L, 1L, 1_000_000_000L}, "a duration such as 10s, 5ms or 250us");
    }

    /** 100mbit, 1gbit, 500kbit, 9600bit. */
    private long bitsPerSecond(String key, String value) {
        final long bps = scaled(key, value, new String[] {"gbit", "mbit", "kbit", "bit"},
            new long[] {1_000_000_000L, 1_000_000L, 1_000L, 1L}, "a rate such as 100mbit or 1gbit");
        return positive(key, bps);
    }

    /** 64kib, 100kb, 1mb, 1500b. */
    private long bytes(String key, String value) {
        return scaled(key, value, new String[] {"kib", "mib", "kb", "mb", "b"},
            new long[] {1024L, 1024L * 1024, 1000L, 1_000_000L, 1L}, "a size such as 1500b, 100kb or 64kib");
    }

    /** A size, or a count of packets such as 50p. */
    private QueueLimit limit(String key, String value) {
        if (value.endsWith("p")) {
            final long packets = number(key, value.substring(0, value.length() - 1));
            if (packets < 1 || packets > 1 << 20) {
                throw error(key + " must hold at least one packet, got " + value);
            }
            return QueueLimit.ofPackets((int) packets);
        }
        final long size = bytes(key, value);
        if (size < 1) {
            throw error(key + " must be positive, got " + value);
        }
        return QueueLimit.ofBytes(size);
    }

    private long scaled(String key, String value, String[] units, long[] scales, String expected) {
        final String lower = value.toLowerCase(Locale.ROOT);
        for (int i = 0; i < units.length; i++) {
            if (lower.endsWith(units[i])) {
                final String digits = lower.substring(0, lower.length() - units[i].length()).strip();
                final double amount;
                try {
                    amount = Double.parseDouble(digits);
                } catch (NumberFormatException e) {
                    break;
                }
                if (amount < 0) {
                    throw error(key + " must not be negative, got " + value);
                }
                return Math.round(amount * scales[i]);
            }
        }
        throw error(key + ": expected " + expected + ", got '" + value + "'");
    }

    private LabInputException error(String reason) {
        return new LabInputException(file + ":" + line + ": " + reason);
    }

    private static String strip(String raw) {
        final int hash = raw.indexOf('#');
        return (hash >= 0 ? raw.substring(0, hash) : raw).strip();
    }

    private static List<String> sorted(Set<String> keys) {
        return keys.stream().sorted().toList();
    }
}
