package dev.tern.script;

import dev.tern.ipv4.wire.IcmpHeader;
import dev.tern.ipv6.wire.Icmpv6Header;
import dev.tern.tcp.wire.TcpFlags;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the packetdrill syntax Tern supports (docs/SCRIPTS.md) into {@link ScriptLine}s. Every line is either
 * understood or rejected with its number and the reason: nothing is skipped silently. Comments are {@code //} to the
 * end of the line and {@code /* ... *}{@code /}, which may span lines. A statement continues over lines, as in
 * packetdrill, while its parentheses, brackets or braces are open, a shell command's backquote or a Python block's
 * {@code %{} is not closed; it counts as the line it starts on.
 */
public final class ScriptParser {
    private static final Pattern TIME = Pattern.compile(
        "(\\*|\\+?(?:\\d+(?:\\.\\d*)?|\\.\\d+))(?:~(\\+?(?:\\d+(?:\\.\\d*)?|\\.\\d+)))?");
    private static final Pattern SEQ = Pattern.compile("(\\d+):(\\d+)\\((\\d+)\\)");
    /** {@code ...(LENGTH)}: any sequence number, this much data. */
    private static final Pattern IGNORED_SEQ = Pattern.compile("(\\d+):(\\d+)\\((\\d+)\\)!");
    private static final Pattern ANY_SEQ = Pattern.compile("\\.\\.\\.\\((\\d{1,5})\\)");
    /** A {@code >} segment's sequence number when the line says any ({@code ...(N)}). */
    static final long ANY_SEQUENCE = -1;
    private static final Pattern CALL = Pattern.compile("([a-z_][a-z0-9_]*)\\s*\\((.*)\\)\\s*=\\s*"
        + "(-?\\d+|0x[0-9a-fA-F]+)(?:\\s+([A-Z][A-Z0-9_]*))?(?:\\s*\\((.*)\\))?\\s*");
    private static final Pattern FLAGS = Pattern.compile("[SFRPUEW.]+");
    /** Linux's Fast Open bits (decimal or {@code 0x} hexadecimal), {@link dev.tern.tcp.FastOpen}'s constants. */
    /** {@code --ip_version=ipv4|ipv6|ipv4-mapped-ipv6}: the line's value is the {@link ScriptIpVersion}'s ordinal. */
    static final String IP_VERSION_OPTION = "--ip_version";
    static final String FAST_OPEN_SYSCTL = "net.ipv4.tcp_fastopen";
    /**
     * The server's Fast Open key, {@code w0-w1-w2-w3} in hexadecimal with an optional {@code ,backup}: read as its
     * four (or eight) 32-bit words.
     */
    static final String FAST_OPEN_KEY_SYSCTL = "net.ipv4.tcp_fastopen_key";
    /** Linux's detection of middleboxes that drop Fast Open SYNs; Tern has none, which is what 0 says. */
    static final String FAST_OPEN_BLACKHOLE_SYSCTL = "net.ipv4.tcp_fastopen_blackhole_timeout_sec";
    /** Packetdrill's {@code --tolerance_usecs=N} option line: how far a packet Tern sends may be from its time. */
    static final String TOLERANCE_OPTION = "--tolerance_usecs";
    /** {@code --tolerance_percent=P}: the tolerance grows to P % of the time since the previous line. */
    static final String TOLERANCE_PERCENT_OPTION = "--tolerance_percent";
    /** {@code --tcp_ts_tick_usecs=N}: a {@code >} line's TS val is checked, N µs a tick (0: not checked). */
    static final String TS_TICK_OPTION = "--tcp_ts_tick_usecs";
    /** {@code --strict_segments}: a {@code >} line matches one segment, never several joined. */
    static final String STRICT_SEGMENTS_OPTION = "--strict_segments";
    /** {@code --tcp_ts_ecr_scaled}: an injected TS ecr is mapped by the first TS val's offset, as the runner's are. */
    static final String TS_ECR_SCALED_OPTION = "--tcp_ts_ecr_scaled";
    /** {@code --mss=N}: an injected segment with more data is cut into segments of N bytes, as GSO cuts it. */
    static final String MSS_OPTION = "--mss";
    /** {@code --mtu=N}: the link's MTU. */
    static final String MTU_OPTION = "--mtu";
    private static final Pattern OPTION = Pattern.compile("(--[a-z_0-9]+)(?:=(\\S*))?");
    /**
     * Packetdrill's options without a faithful meaning in Tern's runner, each with the reason; any other is rejected
     * as unknown.
     */
    private static final java.util.Map<String, String> OPTIONS_WITHOUT_COUNTERPART = java.util.Map.of(
        "--udp_encapsulation", "it runs TCP over UDP (FreeBSD's udp_tunneling), which Tern does not have",
        "--non_fatal", "it lets a script go on after a failed line; Tern's runner stops at the first",
        "--tcp_md5_secret", "Tern has no TCP MD5 signatures (RFC 2385)");
    private static final Pattern SPACED_DOTS = Pattern.compile("^(\\+?[0-9.]+)\\s*\\.\\.\\.\\s*(\\+?[0-9.]+)(?=\\s)");
    private static final Pattern PORTS = Pattern.compile("(\\d+)>(\\d+)(?=\\s)");
    private static final Pattern SPACED_PLUS = Pattern.compile("^\\+\\s+(?=[0-9.])");
    /**
     * Packetdrill's IP fields in parentheses or brackets: {@code (tos 0x10)}, {@code [ttl 64]}, {@code (ect0)}, an
     * IPv6 flow label alone or after the first ({@code (flowlabel 0x1)}, {@code [ect0, flowlabel 0x2]}); FreeBSD's
     * packetdrill names IPv6's two {@code (class 0x28)} and {@code (hlim 64)}.
     */
    private static final Pattern IP_FIELDS = Pattern.compile(
        "[(\\[]\\s*(?:(noecn|ect0|ect1|ect01|ce|(?:tos|class)\\s+0x[0-9a-fA-F]+|(?:ttl|hlim)\\s+\\d+)"
            + "(?:\\s*,\\s*flowlabel\\s+0x([0-9a-fA-F]+))?|flowlabel\\s+0x([0-9a-fA-F]+))\\s*[)\\]]");
    private static final Pattern UDP = Pattern.compile("udp\\s*\\((\\d+)\\)");

    private final String file;
    private final ScriptProfile profile;
    /**
     * Whether the wire carries IPv6, which names ICMP lines by ICMPv6's table ({@link ScriptIcmp6}): the run's IP
     * version until the script's own {@code --ip_version} line, as packetdrill reads a script for its wire's family.
     */
    private boolean ipv6Wire;

    private ScriptParser(String file, ScriptProfile profile, ScriptIpVersion version) {
        this.file = file;
        this.profile = profile;
        this.ipv6Wire = version == ScriptIpVersion.IPV6;
    }

    /**
     * Parses a whole script for {@code profile} (its symbols for {@code #ifdef}, its system's names); {@code file}
     * names it in messages.
     */
    public static List<ScriptLine> parse(String file, String text, ScriptProfile profile) {
        return parse(file, text, profile, ScriptIpVersion.IPV4);
    }

    /** As {@link #parse(String, String, ScriptProfile)}, for a run over {@code version} unless the script says. */
    static List<ScriptLine> parse(String file, String text, ScriptProfile profile, ScriptIpVersion version) {
        return new ScriptParser(file, profile, version).parseAll(ScriptPreprocessor.apply(file, text, profile));
    }

    private List<ScriptLine> parseAll(String text) {
        final List<ScriptLine> lines = new ArrayList<>();
        final String[] raw = text.split("\r?\n", -1);
        boolean inComment = false;
        int commentStart = 0;
        // A statement still open at the end of its line (packetdrill's lexer reads on until it closes).
        final StringBuilder statement = new StringBuilder();
        int statementLine = 0;
        for (int i = 0; i < raw.length; i++) {
            final StringBuilder code = new StringBuilder();
            final String line = raw[i];
            int at = 0;
            while (at < line.length()) {
                if (inComment) {
                    final int end = line.indexOf("*/", at);
                    if (end < 0) {
                        at = line.length();
                    } else {
                        inComment = false;
                        at = end + 2;
                    }
                } else if (line.startsWith("/*", at)) {
                    inComment = true;
                    commentStart = i + 1;
                    at += 2;
                } else if (line.startsWith("//", at)) {
                    at = line.length();
                } else {
                    code.append(line.charAt(at++));
                }
            }
            final String piece = code.toString().strip();
            if (statement.isEmpty()) {
                if (piece.isEmpty()) {
                    continue;
                }
                statementLine = i + 1;
            } else {
                // Empty lines inside a statement stay, so a Python block's lines keep their numbers.
                statement.append('\n');
            }
            statement.append(piece);
            if (unclosed(statement) == null) {
                try {
                    lines.addAll(statements(statementLine, statement.toString()));
                } catch (NumberFormatException e) {
                    throw tooLarge(file, statementLine, e);
                }
                statement.setLength(0);
            }
        }
        if (inComment) {
            throw error(commentStart, "a /* comment is never closed");
        }
        if (!statement.isEmpty()) {
            throw error(statementLine, "the statement starting here never ends: " + unclosed(statement)
                + " (a statement continues over lines until its brackets balance, as in packetdrill)");
        }
        return lines;
    }

    /**
     * What keeps a statement open at the end of a line, or null when it is complete: a Python block without its
     * {@code }%}, a shell command without its closing backquote, or a parenthesis, bracket or brace (outside double
     * quotes) not yet closed.
     */
    private static String unclosed(CharSequence text) {
        final String s = text.toString();
        final int python = s.indexOf("%{");
        if (python >= 0) {
            return s.indexOf("}%", python + 2) < 0 ? "a Python block '%{' without its '}%'" : null;
        }
        if (s.chars().filter(c -> c == '`').count() % 2 != 0) {
            return "a shell command '`' without its closing '`'";
        }
        final StringBuilder open = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < s.length(); i++) {
            final char c = s.charAt(i);
            if (c == '"') {
                quoted = !quoted;
            } else if (!quoted && (c == '(' || c == '[' || c == '{')) {
                open.append(c);
            } else if (!quoted && (c == ')' || c == ']' || c == '}')) {
                if (open.isEmpty()) {
                    return null;
                }
                open.setLength(open.length() - 1);
            }
        }
        return open.isEmpty() ? null : "'" + open.charAt(open.length() - 1) + "' is not closed";
    }

    /**
     * A statement as the lines it makes: a shell command makes a line for each setting (none for one that changes
     * nothing), an option line one or none (an option the runner ignores); any other statement one.
     */
    /**
     * A number the grammar took by its digits but that no field holds (a port, a length, a value beyond 64 bits): the
     * line's error, as for any other bad value, rather than the parse's exception.
     */
    static ScriptException tooLarge(String file, int line, NumberFormatException e) {
        final String message = String.valueOf(e.getMessage());
        final int quote = message.indexOf('"');
        String number = quote >= 0 ? message.substring(quote + 1, Math.max(quote + 1, message.lastIndexOf('"'))) : message;
        if (number.length() > 24) {
            number = number.substring(0, 20) + "... (" + number.length() + " digits)";
        }
        return new ScriptException(file, line, "the number " + number + " is too large for its field");
    }

    private List<ScriptLine> statements(int line, String text) {
        if (text.startsWith("--")) {
            final ScriptLine.Sysctl option = optionLine(line, text.replace('\n', ' ').strip());
            return option == null ? List.of() : List.of(option);
        }
        final Matcher timed = SHELL_TIME.matcher(text);
        if (text.startsWith("`") || timed.lookingAt()) {
            ScriptLine.When when = ScriptLine.Sysctl.NEXT;
            String command = text;
            if (!text.startsWith("`")) {
                when = when(line, timed.group(1).replaceAll("\\s", ""));
                if (when.any() || when.isRange()) {
                    throw error(line, "a shell line (`...`) takes one time, not '*' or a range");
                }
                command = text.substring(timed.end());
            }
            if (!command.endsWith("`") || command.length() < 2) {
                throw error(line, "unexpected text after a shell command's closing '`'");
            }
            final List<ScriptLine> settings = new ArrayList<>();
            for (ScriptLine shell : ScriptShell.settings(file, line, command.substring(1, command.length() - 1),
                profile)) {
                if (shell instanceof ScriptLine.SocketCount c) {
                    settings.add(new ScriptLine.SocketCount(line, when, c.state(), c.port(), c.applicationOnly(),
                        c.ipv6(), c.count(), c.text()));
                    continue;
                }
                if (shell instanceof ScriptLine.SocketDrop d) {
                    settings.add(new ScriptLine.SocketDrop(line, when, d.state(), d.text()));
                    continue;
                }
                final ScriptLine.Sysctl s = (ScriptLine.Sysctl) shell;
                if (!ScriptSettings.known(s.name())) {
                    throw error(line, "sysctl " + s.name() + " is not supported (supported: " + String.join(", ",
                        ScriptSettings.LINUX) + ", and " + String.join(", ", ScriptSettings.LINUX_WITHOUT_EFFECT)
                        + " as no change; FreeBSD's " + String.join(", ", ScriptSettings.FREEBSD) + ", and "
                        + String.join(", ", new java.util.TreeSet<>(ScriptSettings.FREEBSD_FIXED.keySet()))
                        + " at the value that describes Tern)");
                }
                final int wanted = ScriptSettings.arity(s.name());
                if (wanted > 0 && s.values().length != wanted) {
                    throw error(line, "sysctl " + s.name() + " takes " + wanted + " number"
                        + (wanted == 1 ? "" : "s between quotes") + ", got " + s.values().length);
                }
                settings.add(new ScriptLine.Sysctl(line, when, s.name(), s.values()));
            }
            return settings;
        }
        return List.of(statement(line, text));
    }

    /** A shell line's time: {@code +0.00 `...`} (spaces may follow the sign, as the FreeBSD suite writes). */
    private static final Pattern SHELL_TIME = Pattern.compile("(\\+?\\s*[0-9.]+)\\s*(?=`)");

    private ScriptLine statement(int line, String text) {
        final int python = text.indexOf("%{");
        if (python >= 0) {
            return pythonBlock(line, text, python);
        }
        // A statement written over several lines reads as one line.
        text = text.replace('\n', ' ');
        // packetdrill's lexer reads a relative time's '+' as a token of its own: "+ 0.00" is "+0.00".
        text = SPACED_PLUS.matcher(text).replaceFirst("+");
        // packetdrill's lexer lets spaces surround the '...' of a blocking call's times.
        text = SPACED_DOTS.matcher(text).replaceFirst("$1...$2");
        final int space = firstSpace(text);
        if (space < 0) {
            throw error(line, "expected a time and a statement, got '" + text + "'");
        }
        String timeText = text.substring(0, space);
        long returnNs = -1;
        boolean returnRelative = false;
        final int dots = timeText.indexOf("...");
        if (dots >= 0) {
            final String end = timeText.substring(dots + 3);
            timeText = timeText.substring(0, dots);
            if (!TIME.matcher(end).matches() || end.contains("~") || end.equals("*")) {
                throw error(line, "bad return time '" + end + "' after '...': expected seconds like 0.200 or +0.1");
            }
            returnNs = seconds(line, end);
            returnRelative = end.startsWith("+");
            if (!returnRelative && timeText.startsWith("+") && TIME.matcher(timeText).matches()) {
                // As packetdrill: after a relative start the end counts from the same point, the previous line
                // ("+.1...0.3": starts 0.1 s and returns 0.3 s after it), so it is (end - start) after the start.
                final long startNs = seconds(line, timeText);
                if (returnNs < startNs) {
                    throw error(line, "the call would return (" + end + ") before it starts (" + timeText + ")");
                }
                returnNs -= startNs;
                returnRelative = true;
            }
        }
        final ScriptLine.When when = when(line, timeText);
        final String rest = text.substring(space).strip();
        if (dots >= 0) {
            if (rest.startsWith("<") || rest.startsWith(">")) {
                throw error(line, "'...' (a call that spans time) is only for blocking calls, not packets");
            }
            if (when.any() || when.isRange()) {
                throw error(line, "a blocking call's start time takes no '*' or range");
            }
            final ScriptLine.Call call = call(line, when, rest, text);
            return new ScriptLine.Call(line, when, call.name(), call.args(), call.result(), call.errno(), text, returnNs,
                returnRelative);
        }
        if (rest.startsWith("<") || rest.startsWith(">")) {
            return packet(line, when, rest.charAt(0) == '<', rest.substring(1).strip(), text);
        }
        if (when.any()) {
            throw error(line, "'*' (any time) is only allowed for packets Tern sends (>)");
        }
        if (rest.startsWith("...")) {
            throw error(line, "write a blocking call's times without spaces: START...END call(...)");
        }
        return call(line, when, rest, text);
    }

    /**
     * A packetdrill command-line option written as a line, with packetdrill's meaning (docs/SCRIPTS.md): a setting of
     * the comparison or the link, or null for one the runner takes and ignores; others are rejected with the reason.
     */
    private ScriptLine.Sysctl optionLine(int line, String text) {
        final Matcher m = OPTION.matcher(text);
        if (!m.matches()) {
            throw error(line, "bad option line '" + text + "': write --NAME or --NAME=VALUE");
        }
        final String name = m.group(1);
        final String value = m.group(2);
        if (ScriptAddresses.OPTIONS.contains(name)) {
            if (value != null && value.indexOf(':') >= 0) {
                // An IPv6 address (packetdrill's run_all.py gives its own to the IPv6 run): checked, then left out,
                // since the runner over IPv6 has its addresses (ScriptIpVersion).
                try {
                    dev.tern.core.net.Ipv6Address.parse(value);
                } catch (IllegalArgumentException e) {
                    throw error(line, name + ": " + e.getMessage());
                }
                return null;
            }
            return new ScriptLine.Sysctl(line, ScriptLine.Sysctl.NEXT, name, new long[] {address(line, name, value)});
        }
        final long number = switch (name) {
            case TOLERANCE_OPTION, TS_TICK_OPTION -> number(line, name, value, 9_999_999, "microseconds, like " + name
                + "=1000");
            case MSS_OPTION -> number(line, name, value, 65535, "bytes, like --mss=1000");
            case MTU_OPTION -> {
                final long mtu = number(line, name, value, 65535, "bytes, like --mtu=9000");
                if (mtu < MIN_MTU) {
                    throw error(line, "--mtu=" + mtu + " is below IPv4's minimum of " + MIN_MTU + " (RFC 791)");
                }
                yield mtu;
            }
            // Thousandths of a percent: packetdrill takes a fraction ("12.5").
            case TOLERANCE_PERCENT_OPTION -> {
                if (value == null || !value.matches("\\d{1,3}(\\.\\d{0,3})?") || Double.parseDouble(value) > 100) {
                    throw error(line, name + " takes a percentage from 0 to 100, like " + name + "=12.5");
                }
                yield Math.round(Double.parseDouble(value) * 1000);
            }
            case STRICT_SEGMENTS_OPTION -> {
                if (value != null) {
                    throw error(line, name + " takes no value");
                }
                yield 1;
            }
            // Packetdrill then maps an injected TS ecr that echoes no TS val Tern sent by the offset between the
            // script's first TS val and Tern's; Tern's runner maps every TS ecr so (docs/SCRIPTS.md).
            case TS_ECR_SCALED_OPTION -> {
                if (value != null) {
                    throw error(line, name + " takes no value");
                }
                yield -1;
            }
            case IP_VERSION_OPTION -> {
                final ScriptIpVersion version = ScriptIpVersion.named(value);
                if (version == null) {
                    throw error(line, "--ip_version takes ipv4, ipv6 or ipv4-mapped-ipv6, got '" + value + "'");
                }
                ipv6Wire = version == ScriptIpVersion.IPV6;
                yield version.ordinal();
            }
            default -> {
                final String reason = OPTIONS_WITHOUT_COUNTERPART.get(name);
                throw error(line, "command-line option '" + name + "' is not supported: " + (reason != null ? reason
                    : "unknown to Tern's runner (supported: --ip_version=ipv4|ipv6|ipv4-mapped-ipv6, --tolerance_usecs=N, "
                    + "--tolerance_percent=P, --tcp_ts_tick_usecs=N, --tcp_ts_ecr_scaled, --strict_segments, --mss=N, "
                    + "--mtu=N, --define=NAME=VALUE, --local_ip=A.B.C.D, --remote_ip=A.B.C.D, --gateway_ip=A.B.C.D, "
                    + "--netmask_ip=A.B.C.D)"));
            }
        };
        return number < 0 ? null : new ScriptLine.Sysctl(line, ScriptLine.Sysctl.NEXT, name, new long[] {number});
    }

    /**
     * The IPv4 address of an address option line ({@link ScriptAddresses}), unsigned; a netmask must be contiguous
     * ones (RFC 4632 §3.1). An IPv6 address is taken before (and left out).
     */
    private long address(int line, String name, String value) {
        if (value == null || value.isEmpty()) {
            throw error(line, name + " takes an IPv4 address, like " + name + "=198.18.0.2");
        }
        final int address;
        try {
            address = dev.tern.core.net.Ipv4Address.parse(value);
        } catch (IllegalArgumentException e) {
            throw error(line, name + ": " + e.getMessage());
        }
        if (name.equals(ScriptAddresses.NETMASK_OPTION) && Integer.bitCount(address) != Integer.numberOfLeadingZeros(
            ~address)) {
            throw error(line, name + "=" + value + " is not a netmask: its ones must come first, like 255.255.0.0");
        }
        return Integer.toUnsignedLong(address);
    }

    /** IPv4's smallest MTU (RFC 791: every host takes datagrams of 68 bytes). */
    static final int MIN_MTU = 68;

    private long number(int line, String name, String value, long max, String what) {
        if (value == null || !value.matches("\\d{1,9}") || Long.parseLong(value) > max) {
            throw error(line, name + " takes a number of " + what);
        }
        return Long.parseLong(value);
    }

    /**
     * {@code [TIME] %{ ... }%}: packetdrill's Python block, read as asserts on TCP_INFO ({@link TcpInfoAssert});
     * without a time it is at the previous line's ({@code +0}).
     */
    private ScriptLine pythonBlock(int line, String text, int open) {
        final int close = text.indexOf("}%", open + 2);
        if (!text.substring(close + 2).isBlank()) {
            throw error(line, "unexpected '" + text.substring(close + 2).strip() + "' after a Python block's '}%'");
        }
        final String timeText = text.substring(0, open).strip();
        final ScriptLine.When when = timeText.isEmpty() ? new ScriptLine.When(false, 0, true, -1, false)
            : when(line, timeText);
        if (when.any() || when.isRange()) {
            throw error(line, "a Python block takes one time, not '*' or a range");
        }
        // The body's lines keep their numbers: the block may start on the line of its '%{' or the next one.
        final String body = text.substring(open + 2, close);
        return new ScriptLine.TcpInfoAsserts(line, when, TcpInfoAssert.parseBlock(file, line, body,
            profile.dialect().stateNumbers()));
    }

    private static int firstSpace(String text) {
        for (int i = 0; i < text.length(); i++) {
            if (Character.isWhitespace(text.charAt(i))) {
                return i;
            }
        }
        return -1;
    }

    private ScriptLine.When when(int line, String token) {
        final Matcher m = TIME.matcher(token);
        if (!m.matches()) {
            throw error(line, "bad time '" + token + "': expected seconds like 0.100, +0.1, a range 0.1~0.2 or *");
        }
        if (m.group(1).equals("*")) {
            if (m.group(2) != null) {
                throw error(line, "bad time '" + token + "': '*' takes no range");
            }
            return ScriptLine.When.ANY;
        }
        final String start = m.group(1);
        final String end = m.group(2);
        return new ScriptLine.When(false, seconds(line, start), start.startsWith("+"),
            end == null ? -1 : seconds(line, end), end != null && end.startsWith("+"));
    }

    private long seconds(int line, String token) {
        final String digits = token.startsWith("+") ? token.substring(1) : token;
        try {
            return new java.math.BigDecimal(digits).movePointRight(9).longValueExact();
        } catch (ArithmeticException | NumberFormatException e) {
            throw error(line, "bad time '" + token + "': at most nanosecond precision");
        }
    }

    // ------------------------------------------------------------------------------------------------ packets

    private ScriptLine packet(int line, ScriptLine.When when, boolean inbound, String text, String whole) {
        if (inbound && when.any()) {
            throw error(line, "'*' (any time) is only allowed for packets Tern sends (>)");
        }
        ScriptLine.IpFields ip = ScriptLine.IpFields.NONE;
        final Matcher fields = IP_FIELDS.matcher(text);
        if (fields.lookingAt()) {
            ip = fields.group(1) == null ? ScriptLine.IpFields.NONE : ipFields(line, inbound, fields.group(1));
            final String label = fields.group(2) != null ? fields.group(2) : fields.group(3);
            if (label != null) {
                ip = ip.withFlowLabel(flowLabel(line, label));
            }
            text = text.substring(fields.end()).strip();
        }
        if (text.startsWith("(")) {
            throw error(line, "IP header fields on a packet ('" + text.substring(0, text.indexOf(')') < 0
                ? text.length() : text.indexOf(')') + 1) + "') are not supported: the runner takes [noecn], [ect0], "
                + "[ect1], [ce], [ect01], (tos 0xNN) or (class 0xNN), (ttl N) or (hlim N), and (flowlabel 0xN)");
        }
        ScriptLine.Ports ports = null;
        final Matcher portText = PORTS.matcher(text);
        if (portText.lookingAt()) {
            final int source = port(line, portText.group(1));
            final int destination = port(line, portText.group(2));
            ports = new ScriptLine.Ports(source, destination);
            text = text.substring(portText.end()).strip();
        }
        final boolean datagram = text.startsWith("udp");
        if (datagram && ip.check() == ScriptLine.TosCheck.ECN) {
            throw error(line, "an ECN codepoint ([noecn], [ect0], [ect1], [ce]) is for TCP segments only, as "
                + "packetdrill's: write (tos 0xNN) on a datagram");
        }
        if (!inbound && ip.flowLabel() != 0 && (datagram || text.startsWith("icmp") || text.startsWith("["))) {
            throw error(line, "a flow label is compared on TCP segments only (it names a connection's label)");
        }
        if (datagram) {
            return new ScriptLine.Datagram(line, when, inbound, ports, ip, datagramLength(line, text), whole);
        }
        if (text.startsWith("icmp") || text.startsWith("[")) {
            if (ports != null) {
                throw error(line, "an ICMP line takes no ports of its own: write them in the quoted packet, like "
                    + "[8080>48001 1:1461(1460)]");
            }
            return icmp(line, when, inbound, ip, text, whole);
        }
        if (text.startsWith("ip") || text.startsWith("gre") || text.startsWith("sctp") || text.startsWith("mpls")) {
            throw error(line, "only TCP, UDP and ICMP packets are supported, not '" + text.split("\\s+")[0] + "'");
        }
        return segment(line, when, inbound, ports, ip, text, whole);
    }

    /**
     * One of packetdrill's IP fields (its parser.y ip_info): an ECN codepoint, a TOS byte (traffic class) or a TTL
     * (hop limit).
     */
    private ScriptLine.IpFields ipFields(int line, boolean inbound, String field) {
        final String name = field.split("\\s+")[0];
        final String value = field.substring(name.length()).strip();
        if (name.equals("tos") || name.equals("class")) {
            final long tos = value.length() > 17 ? 256 : Long.parseLong(value.substring(2), 16);
            if (tos > 255) {
                throw error(line, name + " " + value + " is more than 8 bits");
            }
            return new ScriptLine.IpFields(ScriptLine.TosCheck.TOS, (int) tos, 0, 0);
        }
        if (name.equals("ttl") || name.equals("hlim")) {
            final long ttl = value.length() > 18 ? 256 : Long.parseLong(value);
            if (ttl < 1 || ttl > 255) {
                throw error(line, name + " " + value + " is not 1..255");
            }
            return new ScriptLine.IpFields(ScriptLine.TosCheck.NONE, 0, (int) ttl, 0);
        }
        if (field.equals("ect01")) {
            if (inbound) {
                throw error(line, "[ect01] can only be used with packets Tern sends (>)");
            }
            return new ScriptLine.IpFields(ScriptLine.TosCheck.EITHER_ECT, 0, 0, 0);
        }
        // RFC 3168 §5: the ECN field's codepoints.
        final int ecn = switch (field) {
            case "ect1" -> 0b01;
            case "ect0" -> 0b10;
            case "ce" -> 0b11;
            default -> 0;
        };
        return new ScriptLine.IpFields(ScriptLine.TosCheck.ECN, ecn, 0, 0);
    }

    /** A flow label in hexadecimal, 20 bits (RFC 6437 §2; 0 is no label, and a {@code >} line then checks none). */
    private int flowLabel(int line, String hex) {
        final long label = hex.length() > 6 ? -1 : Long.parseLong(hex, 16);
        if (label < 0 || label > 0xF_FFFF) {
            throw error(line, "flowlabel 0x" + hex + " is more than 20 bits");
        }
        return (int) label;
    }

    private int port(int line, String digits) {
        final long value = Long.parseLong(digits);
        if (value < 1 || value > 65535) {
            throw error(line, "port " + digits + " is not 1..65535");
        }
        return (int) value;
    }

    /** {@code udp (LENGTH)}: the payload's length. */
    private int datagramLength(int line, String text) {
        final Matcher m = UDP.matcher(text);
        if (!m.matches()) {
            throw error(line, "bad UDP packet '" + text + "': write udp (LENGTH), like udp (100)");
        }
        final long length = Long.parseLong(m.group(1));
        if (length > 65507) {
            throw error(line, "a UDP datagram of " + length + " bytes is longer than IPv4 allows (65507)");
        }
        return (int) length;
    }

    /**
     * The ICMP (IPv4) types by packetdrill's names (its icmp_packet.c table), which a script may also write
     * {@code type_N}; Tern's earlier long forms of unreachable are kept.
     */
    private static final java.util.Map<String, Integer> ICMP_TYPES = java.util.Map.ofEntries(
        java.util.Map.entry("echo_reply", IcmpHeader.ECHO_REPLY),
        java.util.Map.entry("unreachable", IcmpHeader.DESTINATION_UNREACHABLE),
        java.util.Map.entry("dest_unreachable", IcmpHeader.DESTINATION_UNREACHABLE),
        java.util.Map.entry("destination_unreachable", IcmpHeader.DESTINATION_UNREACHABLE),
        java.util.Map.entry("source_quench", IcmpHeader.SOURCE_QUENCH),
        java.util.Map.entry("redirect", IcmpHeader.REDIRECT),
        java.util.Map.entry("echo_request", IcmpHeader.ECHO_REQUEST),
        java.util.Map.entry("time_exceeded", IcmpHeader.TIME_EXCEEDED),
        java.util.Map.entry("parameter_problem", IcmpHeader.PARAMETER_PROBLEM),
        java.util.Map.entry("timestamp_request", 13),
        java.util.Map.entry("timestamp_reply", 14),
        java.util.Map.entry("information_request", 15),
        java.util.Map.entry("information_reply", 16),
        java.util.Map.entry("address_mask_request", 17),
        java.util.Map.entry("address_mask_reply", 18));
    /** Destination Unreachable's codes by packetdrill's names (RFC 792, RFC 1812 §5.2.7.1), and Tern's short ones. */
    private static final java.util.Map<String, Integer> UNREACHABLE_CODES = java.util.Map.ofEntries(
        java.util.Map.entry("net_unreachable", 0), java.util.Map.entry("net", 0),
        java.util.Map.entry("host_unreachable", 1), java.util.Map.entry("host", 1),
        java.util.Map.entry("protocol_unreachable", 2), java.util.Map.entry("protocol", 2),
        java.util.Map.entry("port_unreachable", 3), java.util.Map.entry("port", 3),
        java.util.Map.entry("frag_needed", 4), java.util.Map.entry("fragmentation_needed", 4),
        java.util.Map.entry("source_route_failed", 5), java.util.Map.entry("net_unknown", 6),
        java.util.Map.entry("host_unknown", 7), java.util.Map.entry("source_host_isolated", 8),
        java.util.Map.entry("net_prohibited", 9), java.util.Map.entry("host_prohibited", 10),
        java.util.Map.entry("net_unreachable_for_tos", 11), java.util.Map.entry("host_unreachable_for_tos", 12),
        java.util.Map.entry("packet_filtered", 13), java.util.Map.entry("precedence_violation", 14),
        java.util.Map.entry("precedence_cutoff", 15));
    /**
     * Time Exceeded's codes (RFC 792): the FreeBSD suite's names, and the names packetdrill gives ICMPv6's two codes
     * of the same meaning.
     */
    private static final java.util.Map<String, Integer> TIME_EXCEEDED_CODES = java.util.Map.of(
        "ttl_exceeded_in_transit", 0, "frag_reass_exceeded", 1, "exceeded_hop_limit", 0, "exceeded_frag_time", 1);
    private static final Pattern RAW = Pattern.compile("raw\\s*\\((\\d+)\\)");
    /** The length of an ICMP message packetdrill builds when the line quotes nothing: room for an IPv4 header and 8. */
    static final int ICMP_DEFAULT_LENGTH = IcmpHeader.LENGTH + 28;

    /** Packetdrill's name of an ICMP type ({@code type_N} for one it has no name for). */
    static String icmpTypeName(int type) {
        for (java.util.Map.Entry<String, Integer> e : ICMP_TYPES.entrySet()) {
            if (e.getValue() == type && !e.getKey().startsWith("dest")) {
                return e.getKey();
            }
        }
        return "type_" + type;
    }

    /**
     * {@code icmp TYPE [CODE] [mtu N] [id N] [QUOTED]} (packetdrill's order; Tern also takes the quoted packet first):
     * TYPE and CODE by packetdrill's names or {@code type_N}, {@code code_N} (no code is code 0). An error (unreachable,
     * time exceeded, parameter problem, source quench, redirect) quotes a TCP segment or a UDP datagram that went the
     * other way; any other type takes {@code [raw (N)]}, the ICMP message's length with its header, as packetdrill.
     */
    private ScriptLine.Icmp icmp(int line, ScriptLine.When when, boolean inbound, ScriptLine.IpFields ip, String text,
                                 String whole) {
        ScriptLine quoted = null;
        int rawLength = -1;
        final int open = text.indexOf('[');
        if (open >= 0) {
            final int close = text.indexOf(']', open);
            if (close < 0) {
                throw error(line, "the quoted packet '[' is not closed with ']'");
            }
            String inner = text.substring(open + 1, close).strip();
            text = (text.substring(0, open) + " " + text.substring(close + 1)).strip();
            // The quoted packet may name its ports (its own direction), to quote a flow other than the current one.
            ScriptLine.Ports quotedPorts = null;
            final Matcher portText = PORTS.matcher(inner);
            if (portText.lookingAt()) {
                quotedPorts = new ScriptLine.Ports(port(line, portText.group(1)), port(line, portText.group(2)));
                inner = inner.substring(portText.end()).strip();
            }
            final Matcher raw = RAW.matcher(inner);
            if (raw.matches()) {
                final long value = Long.parseLong(raw.group(1));
                if (value < IcmpHeader.LENGTH || value > 65507 || quotedPorts != null) {
                    throw error(line, "raw (N) is the ICMP message's length with its 8-byte header: 8 to 65507, "
                        + "without ports");
                }
                rawLength = (int) value;
            } else if (inner.startsWith("udp")) {
                quoted = new ScriptLine.Datagram(line, when, !inbound, quotedPorts, ScriptLine.IpFields.NONE,
                    datagramLength(line, inner), whole);
            } else {
                final String segmentText = SEQ.matcher(inner).matches() ? "0 " + inner : inner;
                quoted = segment(line, when, !inbound, quotedPorts, ScriptLine.IpFields.NONE, segmentText, whole);
                if (((ScriptLine.Packet) quoted).seqStart() == ANY_SEQUENCE) {
                    throw error(line, "a quoted segment needs its sequence number, not '...'");
                }
            }
        }
        final String[] words = text.split("\\s+");
        if (words.length < 2 || !words[0].equals("icmp")) {
            throw error(line, "bad ICMP packet '" + text + "': write icmp TYPE [CODE] [mtu N] [id N] [QUOTED], like "
                + "icmp unreachable frag_needed mtu 1200 [1:1461(1460)]");
        }
        final String family = ipv6Wire ? "ICMPv6 " : "ICMP ";
        final int type = icmpNumber(line, words[1], "type_", ipv6Wire ? ScriptIcmp6.TYPES : ICMP_TYPES,
            family + "type");
        int i = 2;
        int code = 0;
        if (i < words.length && !words[i].equals("mtu") && !words[i].equals("id")) {
            if (ipv6Wire && type == Icmpv6Header.DESTINATION_UNREACHABLE && words[i].startsWith("frag")) {
                throw error(line, "unreachable " + words[i] + " is IPv4's: over IPv6 the path's MTU comes in "
                    + "icmp packet_too_big mtu N (RFC 4443 §3.2)");
            }
            code = icmpNumber(line, words[i++], "code_", ipv6Wire ? ScriptIcmp6.codeNames(type)
                    : type == IcmpHeader.DESTINATION_UNREACHABLE ? UNREACHABLE_CODES
                    : type == IcmpHeader.TIME_EXCEEDED ? TIME_EXCEEDED_CODES : java.util.Map.of(),
                family + (ipv6Wire ? ScriptIcmp6.typeName(type) : icmpTypeName(type)) + " code");
        }
        int mtu = -1;
        int id = -1;
        while (i < words.length) {
            final String word = words[i++];
            if (i >= words.length || (!word.equals("mtu") && !word.equals("id"))) {
                throw error(line, "unexpected '" + String.join(" ", java.util.Arrays.copyOfRange(words, i - 1,
                    words.length)) + "' in an ICMP packet: after the type and code only 'mtu N' and 'id N' may follow");
            }
            final long value = unsigned32(line, words[i++]);
            if (ipv6Wire && word.equals("mtu")) {
                // Packet Too Big's MTU takes the whole 32-bit word (RFC 4443 §3.2); the record keeps it as an int.
                mtu = (int) value;
                continue;
            }
            if (value > 65535) {
                throw error(line, word + " " + value + " does not fit its 16-bit field");
            }
            if (word.equals("mtu")) {
                mtu = (int) value;
            } else {
                id = (int) value;
            }
        }
        if (ipv6Wire && mtu != -1 && (type != Icmpv6Header.PACKET_TOO_BIG || code != 0)) {
            throw error(line, "'mtu N' belongs to packet_too_big only over IPv6");
        }
        if (!ipv6Wire && mtu >= 0
            && (type != IcmpHeader.DESTINATION_UNREACHABLE || code != IcmpHeader.FRAGMENTATION_NEEDED)) {
            throw error(line, "'mtu N' belongs to unreachable frag_needed only");
        }
        if (id >= 0 && (ipv6Wire ? !ScriptIcmp6.isEcho(type)
            : type != IcmpHeader.ECHO_REQUEST && type != IcmpHeader.ECHO_REPLY)) {
            throw error(line, "'id N' belongs to echo_request and echo_reply only (their identifier field)");
        }
        final boolean isError = ipv6Wire ? ScriptIcmp6.isError(type) : IcmpHeader.isError(type);
        if (isError && rawLength >= 0) {
            throw error(line, "an ICMP error quotes a packet, [START:END(LENGTH)] or [udp (LENGTH)], not raw bytes");
        }
        if (!isError && quoted != null) {
            throw error(line, "only an ICMP error quotes a packet; " + (ipv6Wire ? ScriptIcmp6.typeName(type)
                : icmpTypeName(type)) + " takes [raw (N)], its length");
        }
        if (inbound && isError && quoted == null) {
            // As packetdrill's grammar (opt_icmp_echoed): no quote is a TCP segment at relative sequence 0.
            quoted = segment(line, when, false, null, ScriptLine.IpFields.NONE, "0 0:0(0)", whole);
        }
        if (inbound && !isError && rawLength < 0) {
            rawLength = ipv6Wire ? ScriptIcmp6.DEFAULT_LENGTH : ICMP_DEFAULT_LENGTH;
        }
        return new ScriptLine.Icmp(line, when, inbound, ip, type, code, mtu, id, rawLength, quoted, whole);
    }

    /** A type or code: a name of {@code names}, or {@code PREFIX}N (0..255). */
    private int icmpNumber(int line, String word, String prefix, java.util.Map<String, Integer> names, String what) {
        final Integer named = names.get(word);
        if (named != null) {
            return named;
        }
        if (word.startsWith(prefix)) {
            try {
                final int value = Integer.parseInt(word.substring(prefix.length()));
                if (value >= 0 && value <= 255) {
                    return value;
                }
            } catch (NumberFormatException e) {
                // Falls through to the error below.
            }
        }
        throw error(line, "unknown " + what + " '" + word + "' (write " + prefix + "N for one by number"
            + (names.isEmpty() ? "" : "; known: " + String.join(", ", new java.util.TreeSet<>(names.keySet()))) + ")");
    }

    /** A TCP segment: flags, sequence numbers, ack, window and options (a quoted segment's flags may be '0': none). */
    private ScriptLine.Packet segment(int line, ScriptLine.When when, boolean inbound, ScriptLine.Ports ports,
                                      ScriptLine.IpFields ip, String text, String whole) {
        final List<String> tokens = packetTokens(line, text);
        if (tokens.isEmpty()) {
            throw error(line, "a packet line needs flags and sequence numbers, like 'S 0:0(0)'");
        }
        int i = 0;
        String flagText = tokens.get(i++);
        if (i < tokens.size() && tokens.get(i).equals(".") && flagText.matches("[SFRPUEW]+")) {
            // Packetdrill's lexer makes "F ." the two tokens of its flags rule WORD '.': the FreeBSD suite writes it.
            flagText += tokens.get(i++);
        }
        // packetdrill writes a segment with no flags at all as '-'.
        if (!FLAGS.matcher(flagText).matches() && !flagText.equals("0") && !flagText.equals("-")) {
            throw error(line, "bad TCP flags '" + flagText + "': use S F R P U E W and . (ACK), like S. or P., or - "
                + "for none");
        }
        int flags = 0;
        for (char c : flagText.toCharArray()) {
            flags |= switch (c) {
                case 'S' -> TcpFlags.SYN;
                case 'F' -> TcpFlags.FIN;
                case 'R' -> TcpFlags.RST;
                case 'P' -> TcpFlags.PSH;
                case 'U' -> TcpFlags.URG;
                case 'E' -> TcpFlags.ECE;
                case 'W' -> TcpFlags.CWR;
                case '.' -> TcpFlags.ACK;
                default -> 0;
            };
        }
        if (i >= tokens.size()) {
            throw error(line, "missing sequence numbers after the flags: write start:end(length), like 1:1(0)");
        }
        // The FreeBSD suite's "any sequence number", '...(N)' (for a SYN-ACK whose ISN the script cannot know), and
        // its packetdrill's '!' after the numbers (not compared).
        final Matcher anySeq = ANY_SEQ.matcher(tokens.get(i));
        final Matcher ignored = IGNORED_SEQ.matcher(tokens.get(i));
        final boolean any = anySeq.matches();
        if (any || ignored.matches()) {
            if (inbound) {
                throw error(line, (any ? "'...(N)' (any sequence number)" : "'!' (sequence number not compared)")
                    + " is only for packets Tern sends (>)");
            }
            i++;
            return segmentRest(line, when, inbound, ports, ip, flags, ANY_SEQUENCE,
                ANY_SEQUENCE + Long.parseLong(any ? anySeq.group(1) : ignored.group(3)), tokens, i, whole);
        }
        final Matcher seq = SEQ.matcher(tokens.get(i++));
        if (!seq.matches()) {
            throw error(line, "bad sequence numbers '" + tokens.get(i - 1) + "': write start:end(length), like 1:1001(1000)");
        }
        final long start = unsigned32(line, seq.group(1));
        final long end = unsigned32(line, seq.group(2));
        final long length = Long.parseLong(seq.group(3));
        if (end - start != length) {
            throw error(line, "sequence range " + start + ":" + end + " holds " + (end - start) + " bytes, not "
                + length);
        }
        if (length > 65535) {
            throw error(line, "a packet of " + length + " bytes is longer than TCP allows in one IPv4 datagram");
        }
        return segmentRest(line, when, inbound, ports, ip, flags, start, end, tokens, i, whole);
    }

    /** A segment's ack, window and options, from token {@code i} on. */
    private ScriptLine.Packet segmentRest(int line, ScriptLine.When when, boolean inbound, ScriptLine.Ports ports,
                                          ScriptLine.IpFields ip, int flags, long start, long end, List<String> tokens, int i, String whole) {
        long ack = -1;
        int window = -1;
        List<ScriptLine.Option> options = null;
        while (i < tokens.size()) {
            final String token = tokens.get(i++);
            switch (token) {
                case "ack" -> ack = unsigned32(line, next(line, tokens, i++, "ack"));
                case "win" -> {
                    final long value = unsigned32(line, next(line, tokens, i++, "win"));
                    if (value > 65535) {
                        throw error(line, "win " + value + " does not fit the 16-bit window field");
                    }
                    window = (int) value;
                }
                default -> {
                    if (token.startsWith("<") && token.endsWith(">")) {
                        if (token.equals("<...>")) {
                            // packetdrill's "any options": a > line's options are then not checked.
                            if (inbound) {
                                throw error(line, "<...> (any options) is only for packets Tern sends (>)");
                            }
                        } else {
                            options = options(line, token.substring(1, token.length() - 1));
                        }
                    } else if (token.equals("urg") || token.equals("ecn") || token.startsWith("(")) {
                        throw error(line, "'" + token + "' on a packet is not supported");
                    } else {
                        throw error(line, "unexpected '" + token + "' in a packet: expected ack N, win N or <options>");
                    }
                }
            }
        }
        if ((flags & TcpFlags.ACK) != 0 && ack < 0 && inbound) {
            // As packetdrill: an injected ACK without its number acknowledges relative sequence number 0.
            ack = 0;
        }
        return new ScriptLine.Packet(line, when, inbound, ports, ip, flags, start, end, ack, window, options, whole);
    }

    /** Splits a packet on spaces, keeping an option list {@code <...>} as one token. */
    private List<String> packetTokens(int line, String text) {
        final List<String> tokens = new ArrayList<>();
        int i = 0;
        while (i < text.length()) {
            final char c = text.charAt(i);
            if (Character.isWhitespace(c)) {
                i++;
            } else if (c == '<') {
                final int end = text.indexOf('>', i);
                if (end < 0) {
                    throw error(line, "an option list '<' is not closed with '>'");
                }
                tokens.add(text.substring(i, end + 1));
                i = end + 1;
            } else {
                int end = i;
                while (end < text.length() && !Character.isWhitespace(text.charAt(end)) && text.charAt(end) != '<') {
                    end++;
                }
                tokens.add(text.substring(i, end));
                i = end;
            }
        }
        return tokens;
    }

    private String next(int line, List<String> tokens, int i, String what) {
        if (i >= tokens.size()) {
            throw error(line, "'" + what + "' needs a number after it");
        }
        return tokens.get(i);
    }

    private List<ScriptLine.Option> options(int line, String text) {
        final List<ScriptLine.Option> options = new ArrayList<>();
        if (text.isBlank()) {
            return options;
        }
        for (String part : text.split(",")) {
            final String[] words = part.strip().split("\\s+");
            final ScriptLine.Option option = switch (words[0]) {
                case "nop" -> new ScriptLine.Option(ScriptLine.Option.Kind.NOP, arguments(line, words, 0));
                case "eol" -> new ScriptLine.Option(ScriptLine.Option.Kind.EOL, arguments(line, words, 0));
                case "sackOK" -> new ScriptLine.Option(ScriptLine.Option.Kind.SACK_OK, arguments(line, words, 0));
                case "mss" -> {
                    final long[] values = arguments(line, words, 1);
                    if (values[0] > 65535) {
                        throw error(line, "mss " + values[0] + " does not fit 16 bits");
                    }
                    yield new ScriptLine.Option(ScriptLine.Option.Kind.MSS, values);
                }
                case "wscale" -> {
                    final long[] values = arguments(line, words, 1);
                    if (values[0] > 255) {
                        throw error(line, "wscale " + values[0] + " does not fit 8 bits");
                    }
                    yield new ScriptLine.Option(ScriptLine.Option.Kind.WSCALE, values);
                }
                case "TS" -> {
                    if (words.length != 5 || !words[1].equals("val") || !words[3].equals("ecr")) {
                        throw error(line, "bad timestamp option '" + part.strip() + "': write TS val N ecr N");
                    }
                    yield new ScriptLine.Option(ScriptLine.Option.Kind.TIMESTAMP,
                        new long[] {unsigned32(line, words[2]), unsigned32(line, words[4])});
                }
                case "sack" -> {
                    if (words.length < 2 || words.length > 5) {
                        throw error(line, "bad SACK option '" + part.strip() + "': write sack A:B [C:D ...], 1 to 4 blocks");
                    }
                    final long[] values = new long[2 * (words.length - 1)];
                    for (int i = 1; i < words.length; i++) {
                        final String[] edges = words[i].split(":");
                        if (edges.length != 2) {
                            throw error(line, "bad SACK block '" + words[i] + "': write A:B");
                        }
                        values[2 * (i - 1)] = unsigned32(line, edges[0]);
                        values[2 * (i - 1) + 1] = unsigned32(line, edges[1]);
                    }
                    yield new ScriptLine.Option(ScriptLine.Option.Kind.SACK, values);
                }
                case "FO" -> fastOpen(line, ScriptLine.Option.Kind.FAST_OPEN, words, part);
                case "FOEXP" -> fastOpen(line, ScriptLine.Option.Kind.FAST_OPEN_EXPERIMENTAL, words, part);
                case "" -> throw error(line, "an empty TCP option (two commas, or one at the end)");
                default -> throw error(line, "TCP option '" + part.strip() + "' is not supported (supported: mss, "
                    + "wscale, sackOK, sack, TS val N ecr N, nop, eol, FO [COOKIE], FOEXP [COOKIE])");
            };
            options.add(option);
        }
        return options;
    }

    /**
     * A Fast Open option (RFC 7413 §4.1.1), as packetdrill writes it: {@code FO} alone asks for a cookie, {@code FO}
     * with an even number of hexadecimal digits carries that cookie (any length the option fits), {@code FO
     * TFO_COOKIE} the cookie Tern's server gives the remote; {@code FOEXP} the same in the experimental option (kind
     * 254, ExID 0xF989).
     */
    private ScriptLine.Option fastOpen(int line, ScriptLine.Option.Kind kind, String[] words, String part) {
        if (words.length > 2) {
            throw error(line, "bad Fast Open option '" + part.strip() + "': write " + words[0] + ", " + words[0]
                + " 0123456789abcdef or " + words[0] + " TFO_COOKIE");
        }
        if (words.length == 1) {
            return new ScriptLine.Option(kind, new long[0]);
        }
        if (words[1].equals("TFO_COOKIE")) {
            return new ScriptLine.Option(kind, new long[] {ScriptLine.Option.TFO_COOKIE});
        }
        final String hex = words[1];
        // As packetdrill, any length the option fits (38 bytes; RFC 7413's cookies are 4 to 16, which Tern checks).
        if (!hex.matches("([0-9a-fA-F]{2}){1,38}")) {
            throw error(line, "bad Fast Open cookie '" + hex + "': an even number of hexadecimal digits, at most 76 "
                + "(38 bytes, what the option fits)");
        }
        final long[] bytes = new long[hex.length() / 2];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return new ScriptLine.Option(kind, bytes);
    }

    private long[] arguments(int line, String[] words, int count) {
        if (words.length != count + 1) {
            throw error(line, "option '" + String.join(" ", words) + "' takes " + count + " value"
                + (count == 1 ? "" : "s"));
        }
        final long[] values = new long[count];
        for (int i = 0; i < count; i++) {
            values[i] = unsigned32(line, words[i + 1]);
        }
        return values;
    }

    private long unsigned32(int line, String token) {
        try {
            final long value = Long.parseLong(token);
            if (value < 0 || value > 0xFFFF_FFFFL) {
                throw error(line, "'" + token + "' is not a 32-bit unsigned number");
            }
            return value;
        } catch (NumberFormatException e) {
            throw error(line, "'" + token + "' is not a number");
        }
    }

    // -------------------------------------------------------------------------------------------------- calls

    private ScriptLine.Call call(int line, ScriptLine.When when, String text, String whole) {
        final Matcher m = CALL.matcher(text);
        if (!m.matches()) {
            throw error(line, "expected a packet ('<' or '>') or a call like 'close(4) = 0', got '" + text + "'");
        }
        final String result = m.group(3);
        final long value = result.startsWith("0x") ? Long.parseLong(result.substring(2), 16) : Long.parseLong(result);
        final String errno = m.group(4);
        if (errno != null && value != -1) {
            throw error(line, "an errno (" + errno + ") goes with the result -1, not " + value);
        }
        return new ScriptLine.Call(line, when, m.group(1), splitArguments(line, m.group(2)), value, errno, whole, -1,
            false);
    }

    /** Splits on commas outside brackets, braces, parentheses and quotes. */
    private List<String> splitArguments(int line, String text) {
        if (text.isBlank()) {
            return new ArrayList<>();
        }
        final List<String> args = splitOutside(text, ',');
        if (args == null) {
            throw error(line, "unbalanced brackets or quotes in the call's arguments");
        }
        args.replaceAll(String::strip);
        return args;
    }

    /**
     * Splits {@code text} on {@code separator} where it stands outside brackets, braces, parentheses and quotes
     * (double, and single as Python writes them); null when those do not balance.
     */
    static List<String> splitOutside(String text, char separator) {
        final List<String> parts = new ArrayList<>();
        int depth = 0;
        char quote = 0;
        int start = 0;
        for (int i = 0; i < text.length(); i++) {
            final char c = text.charAt(i);
            if (quote != 0) {
                quote = c == quote ? 0 : quote;
            } else if (c == '"' || c == '\'') {
                quote = c;
            } else if (c == '[' || c == '{' || c == '(') {
                depth++;
            } else if (c == ']' || c == '}' || c == ')') {
                depth--;
            } else if (depth == 0 && c == separator) {
                parts.add(text.substring(start, i));
                start = i + 1;
            }
        }
        if (depth != 0 || quote != 0) {
            return null;
        }
        parts.add(text.substring(start));
        return parts;
    }

    private ScriptException error(int line, String message) {
        return new ScriptException(file, line, message);
    }
}
