package dev.tern.conformance.replay;

import dev.tern.core.net.InterfaceAddress;
import dev.tern.core.net.Ipv4Address;
import dev.tern.ethernet.wire.MacAddress;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What the recorded stack's application did while a capture was taken, so a replay can do the same at the same
 * moments: the capture shows the wire, not the calls that made Tern send on its own initiative (a ping, a UDP
 * datagram, a TCP connect, write or read).
 *
 * <p>A text file next to the capture ({@code pcaps/NAME.actions}), one action per line, times in nanoseconds since
 * the epoch (the clock of pcap timestamps); {@code #} starts a comment:
 * <pre>
 * 1735689600000000000 start 198.18.0.2/24 mac=02:00:00:00:00:02 mtu=1500 isn=1000000 key=1:2
 * 1735689600300000000 ping 198.18.0.1 id=4660 seq=1 size=56
 * 1735689600400000000 udp-open sock=1
 * 1735689600400000000 udp-send sock=1 198.18.0.1 port=7 length=100 pattern=1
 * 1735689600500000000 tcp-connect conn=1 198.18.0.1 port=5001 local=40000
 * </pre>
 * <ul>
 *   <li>{@code start ADDRESS/PREFIX mac=MAC mtu=N [isn=N key=K0:K1]} (exactly one, first): the stack was built then,
 *       with that address, MAC and MTU, and, when given, TCP's fixed ISN and its RFC 6528 key (decimal longs), so
 *       that ISNs, TCP timestamp offsets and ephemeral ports come out the same in a replay.</li>
 *   <li>{@code ping DESTINATION id=N seq=N size=N}: the application sent one ICMP echo request carrying {@code size}
 *       bytes of the {@code Pinger}'s data pattern (byte i is {@code i & 0xFF}).</li>
 *   <li>UDP, each socket named by a number: {@code udp-open sock=N}; {@code udp-bind sock=N port=P};
 *       {@code udp-connect sock=N ADDRESS port=P}; {@code udp-send sock=N ADDRESS port=P length=L pattern=S} (to
 *       the connected peer when ADDRESS is 0.0.0.0; the data is {@link #pattern}); {@code udp-echo sock=N} (took the
 *       oldest datagram waiting and sent it back to its source); {@code udp-receive sock=N} (took one and kept it);
 *       {@code udp-echo-all sock=N} (sent back every datagram waiting, if any: for fuzzing);
 *       {@code udp-join sock=N GROUP [sources=A,B]} (any source, or those only); {@code udp-leave sock=N GROUP};
 *       {@code udp-close sock=N}.</li>
 *   <li>TCP, each listener and connection named by a number: {@code tcp-listen lsn=N port=P};
 *       {@code tcp-accept conn=N lsn=L} (took the oldest established connection); {@code tcp-connect conn=N ADDRESS
 *       port=P local=P}; {@code tcp-write conn=N length=L pattern=S} (all L bytes went into the send ring);
 *       {@code tcp-read conn=N length=L} (took L bytes); {@code tcp-shutdown conn=N} (shutdownOutput);
 *       {@code tcp-close conn=N}; {@code tcp-abort conn=N}; {@code tcp-close-listener lsn=N}; for fuzzing,
 *       {@code tcp-accept-all lsn=L conn=N} (took every established connection waiting, numbered from N) and
 *       {@code tcp-read-all} (read every connection dry; a connection's error is ignored).</li>
 * </ul>
 * New verbs are added in {@link Replay#apply}.
 */
public record ReplayScript(Path path, Start start, List<Action> actions) {
    /** How the recorded stack was built; {@code tcp} null when the recording left TCP's keys random. */
    public record Start(long atNs, InterfaceAddress address, long mac, int mtu, TcpKeys tcp) {
        public Start(long atNs, InterfaceAddress address, long mac, int mtu) {
            this(atNs, address, mac, mtu, null);
        }
    }

    /** TCP's fixed ISN and RFC 6528 key, as {@code TcpConfig.Builder.fixedIsn} and {@code isnKey} take them. */
    public record TcpKeys(long isn, long key0, long key1) {
    }

    /** One application call: when, the verb, its positional arguments and its {@code key=value} options. */
    public record Action(long atNs, String verb, List<String> arguments, Map<String, String> options, int line) {
        public String option(String key) {
            final String value = options.get(key);
            if (value == null) {
                throw new IllegalArgumentException("line " + line + ": " + verb + " needs " + key + "=");
            }
            return value;
        }

        public int intOption(String key) {
            return Integer.parseInt(option(key));
        }

        public String argument(int index) {
            if (index >= arguments.size()) {
                throw new IllegalArgumentException("line " + line + ": " + verb + " needs " + (index + 1) + " argument(s)");
            }
            return arguments.get(index);
        }
    }

    /** The script next to {@code capture}: the same name with {@code .actions} for {@code .pcap}. */
    public static Path besides(Path capture) {
        final String name = capture.getFileName().toString();
        final String stem = name.endsWith(".pcap") ? name.substring(0, name.length() - ".pcap".length()) : name;
        return capture.resolveSibling(stem + ".actions");
    }

    public static ReplayScript read(Path file) {
        final List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read replay script " + file + ": " + e.getMessage(), e);
        }
        return parse(file, lines);
    }

    public static ReplayScript parse(Path file, List<String> lines) {
        Start start = null;
        final List<Action> actions = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            final String text = lines.get(i).strip();
            if (text.isEmpty() || text.startsWith("#")) {
                continue;
            }
            final Action action = parseLine(text, i + 1, file);
            if (action.verb().equals("start")) {
                if (start != null || !actions.isEmpty()) {
                    throw new IllegalArgumentException(file + ":" + (i + 1) + ": start must come once, first");
                }
                TcpKeys keys = null;
                if (action.options().containsKey("isn") || action.options().containsKey("key")) {
                    final String[] key = action.option("key").split(":");
                    if (key.length != 2) {
                        throw new IllegalArgumentException(file + ":" + (i + 1) + ": key= wants K0:K1");
                    }
                    keys = new TcpKeys(Long.parseLong(action.option("isn")), Long.parseLong(key[0]), Long.parseLong(key[1]));
                }
                start = new Start(action.atNs(), InterfaceAddress.parse(action.argument(0)),
                    MacAddress.parse(action.option("mac")), action.intOption("mtu"), keys);
            } else {
                if (start == null) {
                    throw new IllegalArgumentException(file + ":" + (i + 1) + ": the first action must be start");
                }
                if (!actions.isEmpty() && action.atNs() - actions.getLast().atNs() < 0 || action.atNs() - start.atNs() < 0) {
                    throw new IllegalArgumentException(file + ":" + (i + 1) + ": actions must be in time order");
                }
                actions.add(action);
            }
        }
        if (start == null) {
            throw new IllegalArgumentException(file + ": no start line");
        }
        return new ReplayScript(file, start, List.copyOf(actions));
    }

    private static Action parseLine(String text, int line, Path file) {
        final String[] words = text.split("\\s+");
        if (words.length < 2) {
            throw new IllegalArgumentException(file + ":" + line + ": want 'EPOCH_NS VERB ...', got '" + text + "'");
        }
        final long atNs;
        try {
            atNs = Long.parseLong(words[0]);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(file + ":" + line + ": '" + words[0] + "' is not a time in ns", e);
        }
        final List<String> arguments = new ArrayList<>();
        final Map<String, String> options = new HashMap<>();
        for (int w = 2; w < words.length; w++) {
            final int equals = words[w].indexOf('=');
            if (equals > 0) {
                options.put(words[w].substring(0, equals), words[w].substring(equals + 1));
            } else {
                arguments.add(words[w]);
            }
        }
        return new Action(atNs, words[1], List.copyOf(arguments), Map.copyOf(options), line);
    }

    /** The {@code start} line for a stack built at {@code atNs}. */
    public static String startLine(long atNs, InterfaceAddress address, long mac, int mtu) {
        return atNs + " start " + address + " mac=" + MacAddress.format(mac) + " mtu=" + mtu;
    }

    /** The {@code start} line for a stack built at {@code atNs} with TCP's ISN and key fixed. */
    public static String startLine(long atNs, InterfaceAddress address, long mac, int mtu, TcpKeys tcp) {
        return startLine(atNs, address, mac, mtu) + " isn=" + tcp.isn() + " key=" + tcp.key0() + ":" + tcp.key1();
    }

    /**
     * The data of {@code udp-send} and {@code tcp-write} actions: {@code length} bytes, byte i being
     * {@code (seed + 31 i) & 0xFF} (odd stride: no short period, every byte value).
     */
    public static byte[] pattern(int length, int seed) {
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++) {
            bytes[i] = (byte) (seed + 31 * i);
        }
        return bytes;
    }

    /** The {@code ping} line for an echo request sent at {@code atNs}. */
    public static String pingLine(long atNs, int destination, int identifier, int sequence, int size) {
        return atNs + " ping " + Ipv4Address.format(destination) + " id=" + identifier + " seq=" + sequence + " size=" + size;
    }
}
