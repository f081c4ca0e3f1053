package dev.tern.script;

import dev.tern.core.io.ByteRing;
import dev.tern.core.io.SocketError;
import dev.tern.stack.NetStack;
import dev.tern.stack.SelectableSocket;
import dev.tern.stack.TernSocketException;
import dev.tern.stack.UdpSocket;
import dev.tern.tcp.FastOpenKeys;
import dev.tern.tcp.SendCompletions;
import dev.tern.tcp.TcpError;
import dev.tern.tcp.TcpInfo;
import dev.tern.tcp.TcpLayer;
import dev.tern.tcp.TcpOptions;
import dev.tern.tcp.TcpSocketOptions;
import dev.tern.tcp.TcpState;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;

/**
 * The script's application on Tern's side: its file descriptors and what each socket call does on {@link TcpLayer}'s
 * handle API (TCP) or a {@link UdpSocket} (UDP), with Linux's results and errno names (docs/SCRIPTS.md, "Socket
 * calls"). When a call would block it asks the runner ({@link ScriptRunner#blockThen}), which owns time.
 *
 * <p>Owned by one {@link ScriptRunner}.
 */
final class ScriptSockets {
    private static final int O_RDWR = 2;
    private static final int O_NONBLOCK = 0x800;

    /** A file descriptor of the script's application. */
    /** Where a descriptor the script reused goes on living (open), above any number a script writes. */
    private static final int HIDDEN = 1 << 20;

    private static final class Fd {
        final int number;
        int listener = -1;
        int connection = -1;
        /** Not null for a UDP socket. */
        UdpSocket udp;
        boolean bound;
        /** shutdown(SHUT_RD or SHUT_RDWR): reads return what is queued, then 0, and never block (as Linux's). */
        boolean readShut;
        int flags = O_RDWR;
        int sendBuffer;
        int receiveBuffer;
        boolean noDelay;
        boolean keepalive;
        long keepIdleNs;
        long keepIntervalNs;
        int keepProbes;
        String congestionControl;
        /** SO_LINGER on with a zero timeout: close aborts with a RST. */
        boolean abortOnClose;
        /** SO_LINGER on with a time: close waits up to this long for the peer to acknowledge everything; or 0. */
        long lingerNs;
        boolean reuseAddress;
        boolean reusePort;
        /** TCP_USER_TIMEOUT (ms), TCP_NOTSENT_LOWAT (bytes), TCP_MAXSEG (bytes): 0 for not set. */
        int userTimeoutMs;
        /** As Linux keeps it, unsigned 32 bits: 0xffffffff (or any value from 2^31) is no mark. */
        long notsentLowat;
        int maxSegment;
        /** TCP_SYNCNT: SYN retransmissions before the attempt times out; 0 for not set (the stack's). */
        int synCount;
        /** FreeBSD's TCP_NOOPT: the connect's SYN offers no option. */
        boolean noOptions;
        /** FreeBSD's TCP_KEEPINIT in seconds: the attempt's time limit; 0 for not set (the settings'). */
        int keepInitSeconds;
        /** TCP_INQ: recvmsg returns a TCP_CM_INQ control message with the bytes left to read. */
        boolean inq;
        /** TCP_CORK: short segments wait until it is taken off. */
        boolean cork;
        /** TCP_FASTOPEN's queue length given before listen, or -1. */
        int fastOpenQueue = -1;
        /** TCP_FASTOPEN_KEY given before listen, or null. */
        FastOpenKeys fastOpenKeys;
        /** TCP_FASTOPEN_CONNECT: connect holds the SYN back for the first write when a cookie is cached. */
        boolean fastOpenConnect;
        /** SO_ZEROCOPY: sends with MSG_ZEROCOPY are tracked for completion notices (SendCompletions). */
        boolean zerocopy;
        /** SO_MARK: kept for getsockopt; Tern has no policy routing or packet filter for it to select. */
        long mark;

        Fd(int number) {
            this.number = number;
        }

        boolean nonBlocking() {
            return (flags & O_NONBLOCK) != 0;
        }
    }

    private final ScriptRunner runner;
    private final NetStack stack;
    private final TcpLayer tcp;
    private final TreeMap<Integer, Fd> fds = new TreeMap<>();
    /**
     * Packetdrill's socket under test, whose TCP_INFO a Python block reads: the last one {@code socket} or
     * {@code accept} made (its run_system_call.c); null before the first.
     */
    private Fd underTest;
    private final MemorySegment scratch = Arena.ofAuto().allocate(1 << 16);
    /** The epoll instances; the stack's events for every socket of the script go to it (EPOLLET's wakeups). */
    private final ScriptEpoll epoll = new ScriptEpoll(number -> {
        final Fd fd = fds.get(number);
        return fd == null ? -1 : fd.connection >= 0 ? fd.connection : fd.listener;
    });

    ScriptSockets(ScriptRunner runner, NetStack stack) {
        this.runner = runner;
        this.stack = stack;
        this.tcp = stack.tcp();
    }

    /** Closes the UDP sockets the script left open (TCP connections go with the stack). */
    void close() {
        for (Fd fd : fds.values()) {
            if (fd.udp != null) {
                fd.udp.close();
            }
        }
    }

    /** The TCP listener handles of the application's open descriptors (cold: a sockstat or tcpdrop line). */
    int[] tcpListeners() {
        return fds.values().stream().filter(fd -> fd.udp == null && fd.connection < 0 && fd.listener >= 0)
            .mapToInt(fd -> fd.listener).toArray();
    }

    /** The TCP connection handles of the application's open descriptors (cold: a sockstat or tcpdrop line). */
    int[] tcpConnections() {
        return fds.values().stream().filter(fd -> fd.udp == null && fd.connection >= 0)
            .mapToInt(fd -> fd.connection).toArray();
    }

    /** Runs one call; {@link ScriptRunner.Result#PENDING} when it blocks and spans time. */
    ScriptRunner.Result call(ScriptLine.Call c) {
        return switch (c.name()) {
            case "socket" -> socket(c);
            case "setsockopt" -> setsockopt(c);
            case "getsockopt" -> getsockopt(c);
            case "bind" -> bind(c);
            case "listen" -> listen(c);
            case "accept" -> accept(c);
            case "connect" -> connect(c);
            case "write", "send" -> write(c);
            case "read", "recv" -> read(c);
            case "sendto" -> sendto(c);
            case "recvfrom" -> recvfrom(c);
            case "sendmsg" -> sendmsg(c);
            case "recvmsg" -> recvmsg(c);
            case "close" -> close(c);
            case "shutdown" -> shutdown(c);
            case "fcntl" -> fcntl(c);
            case "ioctl" -> ioctl(c);
            case "poll" -> poll(c);
            case "epoll_create", "epoll_create1" -> epollCreate(c);
            case "epoll_ctl" -> epollControl(c);
            case "epoll_wait" -> epollWait(c);
            default -> throw runner.failure(c.line(), "the call '" + c.name() + "' is not supported (supported: "
                + "socket, setsockopt, getsockopt, bind, listen, accept, connect, write, send, read, recv, sendto, "
                + "recvfrom, sendmsg, recvmsg, close, shutdown, fcntl, ioctl, poll, epoll_create, epoll_create1, "
                + "epoll_ctl, epoll_wait)");
        };
    }

    private void arguments(ScriptLine.Call c, int... counts) {
        for (int count : counts) {
            if (c.args().size() == count) {
                return;
            }
        }
        throw runner.failure(c.line(), c.name() + " takes " + counts[0] + " arguments, not " + c.args().size());
    }


    private Fd fd(ScriptLine.Call c) {
        final Fd fd = fds.get((int) number(c, 0));
        if (fd == null) {
            throw runner.failure(c.line(), c.name() + " on file descriptor " + c.args().getFirst()
                + ", which the script has not opened");
        }
        return fd;
    }

    private long number(ScriptLine.Call c, int index) {
        String text = c.args().get(index);
        if (text.startsWith("[") && text.endsWith("]")) {
            text = text.substring(1, text.length() - 1).strip();
        }
        try {
            return text.startsWith("0x") ? Long.parseLong(text.substring(2), 16) : Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw runner.failure(c.line(), "argument " + (index + 1) + " of " + c.name() + " should be a number, not '"
                + c.args().get(index) + "'");
        }
    }

    private ScriptRunner.Result socket(ScriptLine.Call c) {
        arguments(c, 3);
        final String type = c.args().get(1).replace(" ", "");
        final String protocol = c.args().get(2);
        final boolean nonBlocking = type.contains("SOCK_NONBLOCK");
        final String kind = type.replace("|SOCK_NONBLOCK", "").replace("SOCK_NONBLOCK|", "");
        final boolean stream = kind.equals("SOCK_STREAM") && (protocol.equals("IPPROTO_TCP") || protocol.equals("0"));
        final boolean datagram = kind.equals("SOCK_DGRAM") && (protocol.equals("IPPROTO_UDP") || protocol.equals("0"));
        if (!stream && !datagram) {
            throw runner.failure(c.line(), "only TCP and UDP sockets are supported: socket(..., SOCK_STREAM, "
                + "IPPROTO_TCP) or socket(..., SOCK_DGRAM, IPPROTO_UDP)");
        }
        final String family = c.args().getFirst();
        if (!family.equals("...") && !family.equals("AF_INET")
            && !(family.equals("AF_INET6") && runner.ipVersion() != ScriptIpVersion.IPV4)) {
            throw runner.failure(c.line(), "only AF_INET (or ...) sockets are supported"
                + (family.equals("AF_INET6") ? ", and AF_INET6 with --ip_version=ipv6 or ipv4-mapped-ipv6" : ""));
        }
        final UdpSocket udp;
        try {
            // Over IPv6 an IPv6 socket; ipv4-mapped-ipv6's peer is an IPv4 address, which an IPv4 socket reaches.
            udp = !datagram ? null : runner.ipv6() ? stack.openUdp6() : stack.openUdp();
        } catch (TernSocketException e) {
            return ScriptRunner.Result.fail(socketErrno(e.error()));
        }
        final Fd fd = open(c);
        fd.udp = udp;
        underTest = fd;
        if (stream) {
            runner.socketOpened();
        }
        if (nonBlocking) {
            fd.flags |= O_NONBLOCK;
        }
        return ScriptRunner.Result.ok(fd.number);
    }

    /**
     * A new descriptor: the number the script expects the call to return when that one is free (packetdrill's
     * script descriptors are names it maps to the kernel's, its run_system_call.c), else the lowest free from 3, as
     * a Unix process gets.
     */
    private Fd open(ScriptLine.Call c) {
        if (runner.followsSocketUnderTest() && c.errno() == null && c.result() >= 3 && c.result() < HIDDEN
            && fds.containsKey((int) c.result())) {
            // Packetdrill's descriptors are the script's numbers, mapped to the live ones: a script may give a new
            // socket the number of one it never closed. The old socket stays open, out of the script's reach.
            int hidden = HIDDEN;
            while (fds.containsKey(hidden)) {
                hidden++;
            }
            final Fd old = fds.remove((int) c.result());
            fds.put(hidden, old);
        }
        int number = 3;
        if (c.errno() == null && c.result() >= 0 && c.result() <= Integer.MAX_VALUE
            && !fds.containsKey((int) c.result())) {
            number = (int) c.result();
        }
        while (fds.containsKey(number)) {
            number++;
        }
        final Fd fd = new Fd(number);
        fds.put(number, fd);
        return fd;
    }

    private TcpOptions options(Fd fd) {
        TcpOptions options = TcpOptions.DEFAULT.withNoDelay(fd.noDelay);
        if (fd.sendBuffer > 0 || fd.receiveBuffer > 0) {
            options = options.withBuffers(fd.sendBuffer, fd.receiveBuffer);
        }
        if (fd.keepalive) {
            options = options.withKeepalive(fd.keepIdleNs, fd.keepIntervalNs, fd.keepProbes);
        }
        if (fd.congestionControl != null) {
            options = options.withCongestionControl(fd.congestionControl);
        }
        if (fd.maxSegment > 0) {
            options = options.withMaxSegment(fd.maxSegment);
        }
        if (fd.noOptions) {
            options = options.withNoOptions(true);
        }
        if (fd.keepInitSeconds > 0) {
            options = options.withConnectTimeout(fd.keepInitSeconds * 1000);
        }
        return options;
    }

    /** The socket options that take a number, {@code [N]}: checked by name before the value is read. */
    private static final List<String> NUMERIC_SOCKET_OPTIONS = List.of("SOL_SOCKET SO_REUSEADDR",
        "SOL_SOCKET SO_REUSEPORT", "SOL_SOCKET SO_SNDBUF", "SOL_SOCKET SO_RCVBUF", "IPPROTO_TCP TCP_NODELAY",
        "SOL_SOCKET SO_KEEPALIVE", "IPPROTO_TCP TCP_KEEPIDLE", "IPPROTO_TCP TCP_KEEPINTVL", "IPPROTO_TCP TCP_KEEPCNT",
        "IPPROTO_TCP TCP_USER_TIMEOUT", "IPPROTO_TCP TCP_NOTSENT_LOWAT", "IPPROTO_TCP TCP_MAXSEG",
        "IPPROTO_TCP TCP_INQ", "IPPROTO_IP IP_MTU_DISCOVER", "IPPROTO_TCP TCP_CORK", "IPPROTO_TCP TCP_FASTOPEN",
        "IPPROTO_TCP TCP_FASTOPEN_CONNECT", "IPPROTO_TCP TCP_SYNCNT", "SOL_SOCKET SO_ZEROCOPY", "SOL_SOCKET SO_MARK",
        "IPPROTO_TCP TCP_NOOPT", "IPPROTO_TCP TCP_KEEPINIT");

    /** "LEVEL NAME" of a setsockopt or getsockopt, with Linux's other names for the levels (SOL_TCP, SOL_IP). */
    private static String optionName(ScriptLine.Call c) {
        final String level = switch (c.args().get(1)) {
            case "SOL_TCP" -> "IPPROTO_TCP";
            case "SOL_IP" -> "IPPROTO_IP";
            default -> c.args().get(1);
        };
        return level + " " + c.args().get(2);
    }

    /** Linux's names for IP_MTU_DISCOVER's values (include/uapi/linux/in.h). */
    private static final List<String> PMTUDISC = List.of("IP_PMTUDISC_DONT", "IP_PMTUDISC_WANT", "IP_PMTUDISC_DO",
        "IP_PMTUDISC_PROBE", "IP_PMTUDISC_INTERFACE", "IP_PMTUDISC_OMIT");

    /** Socket options Linux has that Tern cannot carry out, with the reason. */
    private static String unsupportedReason(String option) {
        return switch (option) {
            case "SOL_SOCKET SO_TIMESTAMPING", "SOL_SOCKET SO_TIMESTAMP", "SOL_SOCKET SO_TIMESTAMPNS" -> ": Tern keeps "
                + "no per-packet software or hardware timestamps and has no error queue to report them on";
            case "IPPROTO_TCP TCP_MD5SIG" -> ": Tern does not implement TCP MD5 signatures (RFC 2385)";
            default -> "";
        };
    }

    private ScriptRunner.Result setsockopt(ScriptLine.Call c) {
        arguments(c, 5);
        final Fd fd = fd(c);
        final String option = optionName(c);
        if (option.equals("IPPROTO_TCP TCP_CONGESTION")) {
            // TCP_CONGESTION takes a name: setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, "reno", 4).
            // Linux's "reno" is Tern's "newreno" (both are RFC 5681 with RFC 6582's recovery).
            final String written = c.args().get(3).replace("\"", "").strip();
            final String name = written.equals("reno") ? "newreno" : written;
            if (!tcp.congestionControlNames().contains(name)) {
                return ScriptRunner.Result.fail("ENOENT");
            }
            fd.congestionControl = name;
            if (fd.connection >= 0) {
                tcp.congestionControl(fd.connection, name, runner.nowNs());
            }
            return ScriptRunner.Result.ok(0);
        }
        if (option.equals("SOL_SOCKET SO_LINGER")) {
            return linger(c, fd);
        }
        if (option.equals("IPPROTO_TCP TCP_FASTOPEN_KEY")) {
            return fastOpenKey(c, fd);
        }
        if (!NUMERIC_SOCKET_OPTIONS.contains(option)) {
            final String reason = unsupportedReason(option);
            throw runner.failure(c.line(), "setsockopt " + option + " is not supported" + (!reason.isEmpty() ? reason
                : " (supported: SO_REUSEADDR, SO_REUSEPORT, SO_SNDBUF, SO_RCVBUF, SO_KEEPALIVE, SO_LINGER, "
                + "TCP_NODELAY, TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT, TCP_CONGESTION, TCP_USER_TIMEOUT, "
                + "TCP_NOTSENT_LOWAT, TCP_MAXSEG, TCP_INQ, TCP_CORK, IP_MTU_DISCOVER, TCP_FASTOPEN, TCP_FASTOPEN_KEY, "
                + "TCP_FASTOPEN_CONNECT, TCP_SYNCNT, SO_ZEROCOPY, SO_MARK, TCP_NOOPT, TCP_KEEPINIT)"));
        }
        if (option.equals("IPPROTO_IP IP_MTU_DISCOVER")) {
            return pmtuDiscovery(c);
        }
        final long value = number(c, 3);
        switch (option) {
            // Tern's listeners never conflict with TIME-WAIT connections; the value is only kept for getsockopt.
            case "SOL_SOCKET SO_REUSEADDR" -> fd.reuseAddress = value != 0;
            case "SOL_SOCKET SO_REUSEPORT" -> fd.reusePort = value != 0;
            case "IPPROTO_TCP TCP_USER_TIMEOUT" -> {
                if (value < 0 || value > Integer.MAX_VALUE) {
                    return ScriptRunner.Result.fail("EINVAL");
                }
                fd.userTimeoutMs = (int) value;
                applyTcpSettings(fd);
            }
            case "IPPROTO_TCP TCP_NOTSENT_LOWAT" -> {
                fd.notsentLowat = value & 0xFFFF_FFFFL;
                applyTcpSettings(fd);
            }
            // FreeBSD's: taken at the connect, whose SYN they shape and time.
            case "IPPROTO_TCP TCP_NOOPT" -> fd.noOptions = value != 0;
            case "IPPROTO_TCP TCP_KEEPINIT" -> {
                if (value < 0 || value > Integer.MAX_VALUE / 1000) {
                    return ScriptRunner.Result.fail("EINVAL");
                }
                fd.keepInitSeconds = (int) value;
            }
            case "IPPROTO_TCP TCP_SYNCNT" -> {
                if (value < 1 || value > TcpSocketOptions.MAX_SYN_COUNT) {
                    return ScriptRunner.Result.fail("EINVAL");
                }
                fd.synCount = (int) value;
                applyTcpSettings(fd);
            }
            case "IPPROTO_TCP TCP_MAXSEG" -> {
                if (value != 0 && (value < TcpOptions.MIN_MAX_SEGMENT || value > TcpOptions.MAX_MAX_SEGMENT)) {
                    return ScriptRunner.Result.fail("EINVAL");
                }
                fd.maxSegment = (int) value;
                if (fd.connection >= 0) {
                    tcp.socketOptions().maxSegment(fd.connection, fd.maxSegment);
                }
                if (fd.listener >= 0) {
                    tcp.socketOptions().listenerMaxSegment(fd.listener, fd.maxSegment);
                }
            }
            case "IPPROTO_TCP TCP_INQ" -> fd.inq = value != 0;
            case "IPPROTO_TCP TCP_CORK" -> {
                fd.cork = value != 0;
                if (fd.connection >= 0) {
                    tcp.socketOptions().cork(fd.connection, fd.cork, runner.nowNs());
                }
            }
            case "SOL_SOCKET SO_SNDBUF" -> fd.sendBuffer = buffer(c, value);
            case "SOL_SOCKET SO_RCVBUF" -> fd.receiveBuffer = buffer(c, value);
            case "IPPROTO_TCP TCP_NODELAY" -> {
                fd.noDelay = value != 0;
                if (fd.connection >= 0) {
                    tcp.noDelay(fd.connection, fd.noDelay, runner.nowNs());
                }
            }
            case "SOL_SOCKET SO_KEEPALIVE" -> {
                fd.keepalive = value != 0;
                applyKeepalive(fd);
            }
            case "IPPROTO_TCP TCP_KEEPIDLE" -> {
                fd.keepIdleNs = seconds(c, value);
                applyKeepalive(fd);
            }
            case "IPPROTO_TCP TCP_KEEPINTVL" -> {
                fd.keepIntervalNs = seconds(c, value);
                applyKeepalive(fd);
            }
            case "IPPROTO_TCP TCP_KEEPCNT" -> {
                if (value < 1 || value > 127) {
                    return ScriptRunner.Result.fail("EINVAL");
                }
                fd.keepProbes = (int) value;
                applyKeepalive(fd);
            }
            case "IPPROTO_TCP TCP_FASTOPEN" -> {
                // Linux takes it on a socket that is not connected, and keeps it for listen (RFC 7413 §5.1's queue).
                if (fd.connection >= 0 || value > Integer.MAX_VALUE) {
                    return ScriptRunner.Result.fail("EINVAL");
                }
                fd.fastOpenQueue = (int) value;
                applyFastOpen(fd);
            }
            case "IPPROTO_TCP TCP_FASTOPEN_CONNECT" -> {
                if (!fastOpenClient()) {
                    return ScriptRunner.Result.fail("EOPNOTSUPP");
                }
                if (fd.connection >= 0 || fd.listener >= 0) {
                    return ScriptRunner.Result.fail("EINVAL");
                }
                fd.fastOpenConnect = value != 0;
            }
            case "SOL_SOCKET SO_ZEROCOPY" -> {
                if (fd.udp != null) {
                    throw runner.failure(c.line(), "SO_ZEROCOPY is supported on TCP sockets only (Tern's UDP has no "
                        + "send completions)");
                }
                fd.zerocopy = value != 0;
                if (fd.connection >= 0) {
                    tcp.sendCompletions().enable(fd.connection, fd.zerocopy);
                }
            }
            case "SOL_SOCKET SO_MARK" -> fd.mark = value & 0xFFFFFFFFL;
            default -> throw new IllegalStateException("not in NUMERIC_SOCKET_OPTIONS: " + option);
        }
        return ScriptRunner.Result.ok(0);
    }

    private static final java.util.regex.Pattern LINGER = java.util.regex.Pattern.compile(
        "\\{\\s*onoff\\s*=\\s*(\\d+)\\s*,\\s*linger\\s*=\\s*(\\d+)\\s*}");

    /**
     * {@code setsockopt(fd, SOL_SOCKET, SO_LINGER, {onoff=1, linger=0}, 8)}: close aborts the connection with a RST
     * (RFC 9293 §3.10.5 ABORT) instead of a FIN; {@code onoff=0} restores the graceful close. With a linger time
     * above 0, close blocks until the peer acknowledged the data and the FIN or the time passed, as Linux's close
     * (also on a non-blocking socket, as Linux's).
     */
    private ScriptRunner.Result linger(ScriptLine.Call c, Fd fd) {
        final java.util.regex.Matcher m = LINGER.matcher(c.args().get(3));
        if (!m.matches()) {
            throw runner.failure(c.line(), "SO_LINGER takes {onoff=N, linger=N}");
        }
        final boolean on = Long.parseLong(m.group(1)) != 0;
        final long seconds = Long.parseLong(m.group(2));
        fd.abortOnClose = on && seconds == 0;
        fd.lingerNs = on ? seconds * 1_000_000_000L : 0;
        return ScriptRunner.Result.ok(0);
    }

    /**
     * {@code setsockopt(fd, SOL_IP, IP_MTU_DISCOVER, [IP_PMTUDISC_DO], 4)}: Tern sends every TCP segment with DF set
     * and learns the path MTU from ICMP (RFC 1191), which is WANT and DO for TCP (a segment never exceeds the path
     * MTU it knows); DONT (segments without DF, fragmented on the way) and PROBE (ignoring the path MTU) are not
     * carried out.
     */
    private ScriptRunner.Result pmtuDiscovery(ScriptLine.Call c) {
        final String value = c.args().get(3).replace("[", "").replace("]", "").strip();
        final int mode = value.matches("\\d+") ? Integer.parseInt(value) : PMTUDISC.indexOf(value);
        if (mode < 0 || mode >= PMTUDISC.size()) {
            throw runner.failure(c.line(), "IP_MTU_DISCOVER takes one of " + String.join(", ", PMTUDISC) + ", not "
                + c.args().get(3));
        }
        if (mode != 1 && mode != 2) {
            throw runner.failure(c.line(), "IP_MTU_DISCOVER " + PMTUDISC.get(mode) + " is not supported: Tern sets DF "
                + "on every TCP segment and follows the path MTU it learns (IP_PMTUDISC_WANT and IP_PMTUDISC_DO)");
        }
        return ScriptRunner.Result.ok(0);
    }

    /** TCP_USER_TIMEOUT, TCP_NOTSENT_LOWAT and TCP_SYNCNT onto the descriptor's connection, if it has one. */
    private void applyTcpSettings(Fd fd) {
        if (fd.connection >= 0) {
            if (fd.cork) {
                tcp.socketOptions().cork(fd.connection, true, runner.nowNs());
            }
            tcp.socketOptions().userTimeout(fd.connection, fd.userTimeoutMs);
            tcp.socketOptions().notsentLowat(fd.connection, (int) Math.min(fd.notsentLowat, Integer.MAX_VALUE));
            if (fd.synCount > 0) {
                tcp.socketOptions().synCount(fd.connection, fd.synCount);
            }
            if (fd.zerocopy) {
                tcp.sendCompletions().enable(fd.connection, true);
            }
        }
    }

    /**
     * {@code setsockopt(fd, SOL_TCP, TCP_FASTOPEN_KEY, "\x00...", 16)}: the listener's own Fast Open key, 16 bytes
     * (or 32 with a backup key), as a C string with {@code \xHH} escapes; another length is EINVAL, as on Linux.
     */
    private ScriptRunner.Result fastOpenKey(ScriptLine.Call c, Fd fd) {
        final byte[] bytes = cString(c, c.args().get(3));
        final long length = number(c, 4);
        if (length != FastOpenKeys.KEY_LENGTH && length != 2 * FastOpenKeys.KEY_LENGTH) {
            return ScriptRunner.Result.fail("EINVAL");
        }
        if (bytes.length < length) {
            throw runner.failure(c.line(), "TCP_FASTOPEN_KEY's string has " + bytes.length + " bytes, fewer than the "
                + "length " + length + " the call gives");
        }
        fd.fastOpenKeys = FastOpenKeys.ofBytes(java.util.Arrays.copyOf(bytes, (int) length));
        applyFastOpen(fd);
        return ScriptRunner.Result.ok(0);
    }

    /** A script's string literal as bytes: {@code \xHH}, {@code \\}, {@code \"} and {@code \0} escapes. */
    private byte[] cString(ScriptLine.Call c, String literal) {
        final String text = literal.strip();
        if (text.length() < 2 || text.charAt(0) != '"' || text.charAt(text.length() - 1) != '"') {
            throw runner.failure(c.line(), "expected a string between double quotes, got " + literal);
        }
        final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        for (int i = 1; i < text.length() - 1; i++) {
            final char ch = text.charAt(i);
            if (ch != '\\') {
                out.write(ch);
            } else if (i + 3 < text.length() && text.charAt(i + 1) == 'x') {
                try {
                    out.write(Integer.parseInt(text.substring(i + 2, i + 4), 16));
                } catch (NumberFormatException e) {
                    throw runner.failure(c.line(), "bad escape '" + text.substring(i, i + 4) + "' in " + literal);
                }
                i += 3;
            } else if (i + 2 < text.length()) {
                final char escaped = text.charAt(++i);
                out.write(escaped == '0' ? 0 : escaped);
            } else {
                throw runner.failure(c.line(), "a string ends in a lone backslash: " + literal);
            }
        }
        return out.toByteArray();
    }

    /** The socket's Fast Open settings on its listener, once it listens. */
    private void applyFastOpen(Fd fd) {
        if (fd.listener < 0) {
            return;
        }
        if (fd.fastOpenQueue >= 0) {
            tcp.fastOpen().listen(fd.listener, fd.fastOpenQueue);
        }
        if (fd.fastOpenKeys != null) {
            tcp.fastOpen().key(fd.listener, fd.fastOpenKeys);
        }
    }

    /** Keepalive times are whole seconds, as on Linux (1 .. 32767). */
    private long seconds(ScriptLine.Call c, long value) {
        if (value < 1 || value > 32767) {
            throw runner.failure(c.line(), "a keepalive time of " + value + " s is out of Linux's range (1 .. 32767)");
        }
        return value * 1_000_000_000L;
    }

    /** Applies the keepalive settings to an open connection (a listener's children inherit them at listen). */
    private void applyKeepalive(Fd fd) {
        if (fd.connection >= 0) {
            tcp.keepalive(fd.connection, fd.keepalive, fd.keepIdleNs, fd.keepIntervalNs, fd.keepProbes, runner.nowNs());
        }
    }

    /** Tern's buffers are powers of two from 1 KiB: the size asked for is rounded up (docs/SCRIPTS.md). */
    private int buffer(ScriptLine.Call c, long value) {
        if (value < 1 || value > (1 << 30)) {
            throw runner.failure(c.line(), "a buffer of " + value + " bytes is out of Tern's range (1 KiB .. 1 GiB)");
        }
        return bufferSize(value);
    }

    /** A buffer of {@code bytes} as Tern makes it: a power of two, 1 KiB to 1 GiB, rounded up (clamped). */
    static int bufferSize(long bytes) {
        return Math.max(1024, roundUp((int) Math.clamp(bytes, 1, 1 << 30)));
    }

    private static int roundUp(int value) {
        final int high = Integer.highestOneBit(value);
        return high == value ? value : high << 1;
    }

    private ScriptRunner.Result getsockopt(ScriptLine.Call c) {
        arguments(c, 5);
        final Fd fd = fd(c);
        final String option = optionName(c);
        final String expected = c.args().get(3);
        if (option.equals("IPPROTO_TCP TCP_INFO")) {
            return tcpInfo(c, fd, expected);
        }
        final String actual = switch (option) {
            case "SOL_SOCKET SO_ERROR" -> {
                if (fd.udp != null) {
                    // UdpSocket reports a pending error through its next call, not as a value to read.
                    throw runner.failure(c.line(), "getsockopt SO_ERROR is supported on TCP sockets only; on UDP the "
                        + "error comes from the next read or write");
                }
                // As Linux: the connection's error, else its soft error (ICMP, or RFC 1122's R1 reached), which
                // reading takes, as Linux's SO_ERROR takes sk_err_soft.
                int error = fd.connection < 0 ? TcpError.NONE : takeError(fd.connection);
                if (error == TcpError.NONE && fd.connection >= 0) {
                    error = tcp.takeSoftError(fd.connection);
                }
                yield error == TcpError.NONE ? "0" : errno(error);
            }
            case "IPPROTO_TCP TCP_NODELAY" -> fd.noDelay ? "1" : "0";
            case "SOL_SOCKET SO_ZEROCOPY" -> fd.zerocopy ? "1" : "0";
            case "SOL_SOCKET SO_MARK" -> Long.toString(fd.mark);
            case "SOL_SOCKET SO_RCVBUF" -> Long.toString(SocketBufferSizes.reported(runner.dialect(),
                fd.receiveBuffer > 0 ? fd.receiveBuffer : runner.reportedBuffer(true), peerMss(fd)));
            case "SOL_SOCKET SO_SNDBUF" -> Long.toString(SocketBufferSizes.reported(runner.dialect(),
                fd.sendBuffer > 0 ? fd.sendBuffer : runner.reportedBuffer(false), peerMss(fd)));
            case "SOL_SOCKET SO_REUSEADDR" -> fd.reuseAddress ? "1" : "0";
            case "SOL_SOCKET SO_REUSEPORT" -> fd.reusePort ? "1" : "0";
            case "SOL_SOCKET SO_KEEPALIVE" -> fd.keepalive ? "1" : "0";
            case "IPPROTO_TCP TCP_KEEPIDLE" -> Long.toString((fd.keepIdleNs > 0 ? fd.keepIdleNs
                : tcp.config().keepaliveIdleNs()) / 1_000_000_000L);
            case "IPPROTO_TCP TCP_KEEPINTVL" -> Long.toString((fd.keepIntervalNs > 0 ? fd.keepIntervalNs
                : tcp.config().keepaliveIntervalNs()) / 1_000_000_000L);
            case "IPPROTO_TCP TCP_KEEPCNT" -> Integer.toString(fd.keepProbes > 0 ? fd.keepProbes
                : tcp.config().keepaliveProbes());
            case "IPPROTO_TCP TCP_USER_TIMEOUT" -> Integer.toString(fd.userTimeoutMs);
            case "IPPROTO_TCP TCP_NOOPT" -> fd.noOptions ? "1" : "0";
            // FreeBSD gives the socket's own, else the sysctl's in effect now, in seconds.
            case "IPPROTO_TCP TCP_KEEPINIT" -> Long.toString(fd.keepInitSeconds > 0 ? fd.keepInitSeconds
                : tcp.config().connectTimeoutNs() / 1_000_000_000L);
            // Linux gives the socket's own count, else the sysctl's in effect now.
            case "IPPROTO_TCP TCP_SYNCNT" -> Integer.toString(fd.connection >= 0
                ? tcp.socketOptions().synCount(fd.connection) : fd.synCount > 0 ? fd.synCount
                : tcp.config().synRetries());
            // Linux gives the socket's own mark, 0 when only the sysctl's applies.
            case "IPPROTO_TCP TCP_NOTSENT_LOWAT" -> Long.toString(fd.notsentLowat);
            case "IPPROTO_TCP TCP_INQ" -> fd.inq ? "1" : "0";
            case "IPPROTO_TCP TCP_CORK" -> fd.cork ? "1" : "0";
            case "IPPROTO_TCP TCP_MAXSEG" -> Integer.toString(fd.connection >= 0
                ? tcp.socketOptions().maxSegment(fd.connection)
                : fd.maxSegment > 0 ? fd.maxSegment : TcpSocketOptions.UNCONNECTED_MSS);
            // Linux's "reno" is Tern's "newreno", as setsockopt takes it.
            case "IPPROTO_TCP TCP_CONGESTION" -> {
                final String name = fd.connection >= 0 ? tcp.congestionControlName(fd.connection)
                    : fd.congestionControl != null ? fd.congestionControl : tcp.config().congestionControl();
                yield "\"" + (name.equals("newreno") ? "reno" : name) + "\"";
            }
            case "SOL_SOCKET SO_LINGER" -> "{onoff=" + (fd.abortOnClose || fd.lingerNs > 0 ? 1 : 0) + ", linger="
                + fd.lingerNs / 1_000_000_000L + "}";
            default -> throw runner.failure(c.line(), "getsockopt " + option + " is not supported" + (!unsupportedReason(
                option).isEmpty() ? unsupportedReason(option) : " (supported: SO_ERROR, SO_RCVBUF, SO_SNDBUF, SO_REUSEADDR, "
                + "SO_REUSEPORT, SO_KEEPALIVE, SO_LINGER, TCP_NODELAY, TCP_KEEPIDLE, TCP_KEEPINTVL, TCP_KEEPCNT, "
                + "TCP_CONGESTION, TCP_USER_TIMEOUT, TCP_NOTSENT_LOWAT, TCP_MAXSEG, TCP_INQ, TCP_CORK, TCP_SYNCNT, TCP_INFO)"));
        };
        final String want = (expected.startsWith("[") && expected.endsWith("]")
            ? expected.substring(1, expected.length() - 1).strip() : expected).replace(" ", "");
        if (!want.equals(actual.replace(" ", "")) && !(want.matches("0x[0-9a-fA-F]+") && actual.matches("\\d+")
            && Long.parseLong(want.substring(2), 16) == Long.parseLong(actual))) {
            throw runner.failure(c.line(), "getsockopt " + option + " gave [" + actual + "], the script expects " + expected);
        }
        return ScriptRunner.Result.ok(0);
    }

    /** The connection's MSS once the peer's SYN or SYN-ACK told it (0 before, and for a listener). */
    private int peerMss(Fd fd) {
        if (fd.connection < 0) {
            return 0;
        }
        final int state = tcp.state(fd.connection);
        return state == TcpState.SYN_SENT || state == TcpState.CLOSED ? 0 : tcp.mss(fd.connection);
    }

    /**
     * {@code getsockopt(fd, IPPROTO_TCP, TCP_INFO, {tcpi_state=TCP_ESTABLISHED, tcpi_rto=200000}, [...])}: each
     * field written is compared with the connection's ({@link #tcpInfoField}); fields not written are not.
     */
    private ScriptRunner.Result tcpInfo(ScriptLine.Call c, Fd fd, String expected) {
        if (!expected.startsWith("{") || !expected.endsWith("}")) {
            throw runner.failure(c.line(),
                "TCP_INFO is compared field by field: write {tcpi_state=TCP_ESTABLISHED, ...}");
        }
        if (fd.connection < 0 && fd.listener < 0) {
            return ScriptRunner.Result.fail("ENOTCONN");
        }
        for (String field : expected.substring(1, expected.length() - 1).split(",")) {
            final String[] pair = field.split("=");
            if (pair.length != 2) {
                throw runner.failure(c.line(), "bad TCP_INFO field '" + field.strip() + "': write name=value");
            }
            final String name = pair[0].strip();
            final String want = pair[1].strip();
            if (!TcpInfoAssert.FIELDS.contains(name)) {
                throw runner.failure(c.line(), "TCP_INFO field '" + name + "' is not supported ("
                    + String.join(", ", TcpInfoAssert.FIELDS) + ")");
            }
            final String actual = name.equals("tcpi_state") ? stateName(fd)
                : Long.toString(tcpInfoField(fd, name));
            if (!actual.equals(want)) {
                throw runner.failure(c.line(), "getsockopt TCP_INFO gave " + name + "=" + actual
                    + ", the script expects " + want);
            }
        }
        return ScriptRunner.Result.ok(0);
    }

    /**
     * A packetdrill Python block: each assert is evaluated on the TCP_INFO of the socket under test now (packetdrill
     * takes TCP_INFO at the block's time and runs the Python at the end; the outcome is the same).
     */
    void checkTcpInfo(ScriptLine.TcpInfoAsserts block) {
        final Fd fd = underTest;
        if (fd == null || fd.udp != null) {
            throw runner.failure(block.line(), "a Python block reads TCP_INFO of the socket under test (the last one "
                + "socket or accept made), and " + (fd == null ? "there is none yet" : "file descriptor " + fd.number
                + " is a UDP socket"));
        }
        for (TcpInfoAssert check : block.asserts()) {
            final String failure = check.failure(name -> {
                if (fd.connection < 0 && fd.listener < 0 && !name.equals("tcpi_state")) {
                    // A socket never connected has only its state here: Tern keeps no control block for it.
                    throw runner.failure(check.line(), "file descriptor " + fd.number + " has never connected or "
                        + "listened: of its TCP_INFO the runner knows tcpi_state only, not " + name);
                }
                return tcpInfoField(fd, name);
            });
            if (failure != null) {
                throw runner.failure(check.line(), failure + ", on file descriptor " + fd.number);
            }
        }
    }

    /** One TCP_INFO field of {@link LinuxTcpInfo#FIELDS} as Linux gives it, of the descriptor's connection. */
    private long tcpInfoField(Fd fd, String name) {
        final TcpInfo info = fd.connection < 0 ? null : tcp.info(fd.connection, runner.nowNs());
        return LinuxTcpInfo.field(info, runner.dialect().stateNumbers().get(stateName(fd)), runner.nowNs(), name);
    }

    /**
     * The script's system's name of the descriptor's state ({@link ScriptDialect}): Linux's TCP_LISTEN for a
     * listener, TCP_CLOSE before a connect and once the connection is gone; FreeBSD's TCPI_LISTEN, TCPI_CLOSED.
     */
    private String stateName(Fd fd) {
        final ScriptDialect dialect = runner.dialect();
        return fd.connection >= 0 ? dialect.stateName(tcp.state(fd.connection))
            : fd.listener >= 0 ? dialect.listenName() : dialect.stateName(TcpState.CLOSED);
    }

    private ScriptRunner.Result bind(ScriptLine.Call c) {
        arguments(c, 3);
        final Fd fd = fd(c);
        if (fd.udp != null) {
            try {
                fd.udp.bind(ScriptRunner.SCRIPT_PORT);
            } catch (TernSocketException e) {
                return ScriptRunner.Result.fail(socketErrno(e.error()));
            }
            runner.udpFlow(ScriptRunner.SCRIPT_PORT, ScriptRunner.REMOTE_PORT);
        }
        fd.bound = true;
        return ScriptRunner.Result.ok(0);
    }

    private ScriptRunner.Result listen(ScriptLine.Call c) {
        arguments(c, 2);
        final Fd fd = fd(c);
        if (fd.udp != null) {
            return ScriptRunner.Result.fail("EOPNOTSUPP");
        }
        if (!fd.bound) {
            throw runner.failure(c.line(), "listen on a socket that is not bound: Tern picks no port by itself; bind first");
        }
        final int listener = tcp.listen(ScriptRunner.SCRIPT_PORT, (int) Math.max(1, number(c, 1)), options(fd), epoll);
        if (listener < 0) {
            return ScriptRunner.Result.fail(errno(-listener));
        }
        fd.listener = listener;
        applyFastOpen(fd);
        return ScriptRunner.Result.ok(0);
    }

    private ScriptRunner.Result accept(ScriptLine.Call c) {
        arguments(c, 3);
        final Fd fd = fd(c);
        if (fd.udp != null) {
            return ScriptRunner.Result.fail("EOPNOTSUPP");
        }
        if (fd.listener < 0) {
            return ScriptRunner.Result.fail("EINVAL");
        }
        if (tcp.acceptable(fd.listener) == 0) {
            if (fd.nonBlocking()) {
                return ScriptRunner.Result.fail("EAGAIN");
            }
            return runner.blockThen(c, () -> tcp.acceptable(fd.listener) > 0, "a connection to accept",
                () -> acceptNow(c, fd));
        }
        return acceptNow(c, fd);
    }

    private ScriptRunner.Result acceptNow(ScriptLine.Call c, Fd fd) {
        final int connection = tcp.accept(fd.listener);
        if (connection < 0) {
            return ScriptRunner.Result.fail(errno(-connection));
        }
        final Fd accepted = open(c);
        accepted.connection = connection;
        underTest = accepted;
        accepted.keepalive = fd.keepalive;
        accepted.keepIdleNs = fd.keepIdleNs;
        accepted.keepIntervalNs = fd.keepIntervalNs;
        accepted.keepProbes = fd.keepProbes;
        accepted.congestionControl = fd.congestionControl;
        accepted.noDelay = fd.noDelay;
        // As Linux's accepted sockets, which are clones of the listener.
        accepted.userTimeoutMs = fd.userTimeoutMs;
        accepted.notsentLowat = fd.notsentLowat;
        accepted.maxSegment = fd.maxSegment;
        accepted.synCount = fd.synCount;
        accepted.inq = fd.inq;
        accepted.cork = fd.cork;
        accepted.lingerNs = fd.lingerNs;
        accepted.abortOnClose = fd.abortOnClose;
        accepted.zerocopy = fd.zerocopy;
        accepted.mark = fd.mark;
        applyTcpSettings(accepted);
        if (fd.noDelay) {
            tcp.noDelay(connection, true, runner.nowNs());
        }
        return ScriptRunner.Result.ok(accepted.number);
    }

    private ScriptRunner.Result connect(ScriptLine.Call c) {
        arguments(c, 3);
        final Fd fd = fd(c);
        if (fd.udp != null) {
            try {
                if (fd.udp.ipv6()) {
                    fd.udp.connect(ScriptIpVersion.REMOTE_IPV6, ScriptRunner.SCRIPT_PORT);
                } else {
                    fd.udp.connect(runner.remoteAddress(), ScriptRunner.SCRIPT_PORT);
                }
            } catch (TernSocketException e) {
                return ScriptRunner.Result.fail(socketErrno(e.error()));
            }
            runner.udpFlow(fd.udp.localPort(), ScriptRunner.SCRIPT_PORT);
            return ScriptRunner.Result.ok(0);
        }
        if (fd.connection >= 0) {
            final int state = tcp.state(fd.connection);
            if (state == TcpState.SYN_SENT) {
                // Linux's __inet_stream_connect: a connect whose SYN waits for the first write (TCP_FASTOPEN_CONNECT
                // with a cookie) counts as connected; one whose SYN is out, as under way.
                return ScriptRunner.Result.fail(tcp.fastOpen().synDataRoom(fd.connection) >= 0 ? "EISCONN" : "EALREADY");
            }
            final int error = takeError(fd.connection);
            return error != TcpError.NONE ? ScriptRunner.Result.fail(errno(error)) : ScriptRunner.Result.fail("EISCONN");
        }
        final ScriptRunner.Result refused = open(fd, fd.fastOpenConnect);
        if (refused != null) {
            return refused;
        }
        final int connection = fd.connection;
        if (tcp.fastOpen().synDataRoom(connection) >= 0) {
            // TCP_FASTOPEN_CONNECT with a cookie: connect returns at once, the first write goes in the SYN (Linux).
            return ScriptRunner.Result.ok(0);
        }
        if (fd.nonBlocking()) {
            return ScriptRunner.Result.fail("EINPROGRESS");
        }
        return runner.blockThen(c, () -> tcp.state(connection) != TcpState.SYN_SENT, "the handshake to complete", () -> {
            final int error = takeError(connection);
            return error == TcpError.NONE ? ScriptRunner.Result.ok(0) : ScriptRunner.Result.fail(errno(error));
        });
    }

    /**
     * The active open of {@code connect} (a Fast Open one with {@code fastOpen}), its flow known to the runner; null,
     * or the errno it failed with.
     */
    private ScriptRunner.Result open(Fd fd, boolean fastOpen) {
        final int connection = runner.ipVersion() == ScriptIpVersion.IPV6
            ? tcp.connect6(ScriptIpVersion.REMOTE_IPV6.high(), ScriptIpVersion.REMOTE_IPV6.low(),
                ScriptRunner.SCRIPT_PORT, 0, options(fd).withFastOpen(fastOpen), epoll, runner.nowNs())
            : tcp.connect(runner.remoteAddress(), ScriptRunner.SCRIPT_PORT, 0, options(fd).withFastOpen(fastOpen),
                epoll, runner.nowNs());
        if (connection < 0) {
            return ScriptRunner.Result.fail(errno(-connection));
        }
        fd.connection = connection;
        applyTcpSettings(fd);
        runner.connected(tcp.localPort(connection), ScriptRunner.SCRIPT_PORT);
        runner.poll();
        return null;
    }

    /**
     * Whether the stack's settings now let a client use Fast Open (Linux's tcp_fastopen bit 0x1, checked when the
     * call is made: TCP_FASTOPEN_CONNECT and MSG_FASTOPEN are EOPNOTSUPP without it).
     */
    private boolean fastOpenClient() {
        return (tcp.config().fastOpen() & dev.tern.tcp.FastOpen.CLIENT) != 0;
    }

    /**
     * {@code sendto(fd, ..., N, MSG_FASTOPEN, ..., ...)} on a TCP socket, or a write on a TCP_FASTOPEN_CONNECT socket
     * whose SYN waits (RFC 7413 §4.2.1, as Linux): connects if the socket is not, then, with a cookie cached, puts as
     * much of the data in the SYN as it carries; without one the SYN asks for a cookie and no data goes. Non-blocking
     * it returns what went in the SYN, or EINPROGRESS; blocking it waits for the handshake and writes the rest.
     */
    private ScriptRunner.Result fastOpenWrite(ScriptLine.Call c, Fd fd, int length, int flags) {
        if (fd.connection < 0) {
            final ScriptRunner.Result refused = open(fd, true);
            if (refused != null) {
                return refused;
            }
        } else if (tcp.fastOpen().synDataRoom(fd.connection) < 0) {
            if ((flags & MessageFlags.FASTOPEN) != 0 && runner.dialect() == ScriptDialect.LINUX
                && tcp.state(fd.connection) == TcpState.SYN_SENT) {
                // Linux's tcp_sendmsg_fastopen connects again: EALREADY while the SYN is out.
                return ScriptRunner.Result.fail("EALREADY");
            }
            return write(c, fd, length, flags & ~MessageFlags.FASTOPEN);
        }
        final int connection = fd.connection;
        final int room = tcp.fastOpen().synDataRoom(connection);
        final boolean blocking = !fd.nonBlocking() && (flags & MessageFlags.DONTWAIT) == 0;
        // A blocking call's data waits in the send buffer from the start, as Linux's writer waiting for the
        // handshake holds it: the SYN takes what it carries, the rest goes with the handshake's last ACK (Linux
        // delays that ACK while a write waits, tcp_rcv_synsent_state_process).
        final int queued = blocking ? fill(connection, length, false)
            : room < 0 ? 0 : fill(connection, Math.min(room, length), false);
        // MSG_ZEROCOPY with the SYN's data: its completion comes with the SYN-ACK that acknowledges it.
        final boolean tracked = (flags & MessageFlags.ZEROCOPY) != 0 && fd.zerocopy;
        if (!blocking) {
            track(tracked, connection, queued);
        }
        if (room >= 0 && queued == 0) {
            tcp.sendable(connection, runner.nowNs());
        }
        runner.poll();
        if (!blocking) {
            return queued > 0 ? ScriptRunner.Result.ok(queued) : ScriptRunner.Result.fail("EINPROGRESS");
        }
        return runner.blockThen(c, () -> tcp.state(connection) != TcpState.SYN_SENT, "the handshake to complete",
            () -> {
                final ScriptRunner.Result error = writeError(connection);
                if (error != null) {
                    return error;
                }
                final int rest = fill(connection, length - queued, false);
                track(tracked, connection, queued + rest);
                return ScriptRunner.Result.ok(queued + rest);
            });
    }

    private ScriptRunner.Result write(ScriptLine.Call c) {
        arguments(c, 3, 4);
        final int flags = c.args().size() == 4 ? MessageFlags.send(runner, c, 3) : 0;
        return write(c, fd(c), (int) number(c, 2), flags);
    }

    /** Writes {@code length} bytes of the application's pattern (write, send, sendmsg). */
    private ScriptRunner.Result write(ScriptLine.Call c, Fd fd, int length, int flags) {
        if (fd.udp != null) {
            return sendDatagram(c, fd, length, false, flags);
        }
        if (fd.connection < 0) {
            return ScriptRunner.Result.fail(fd.listener >= 0 ? "ENOTCONN" : "EPIPE");
        }
        final int connection = fd.connection;
        if (tcp.fastOpen().synDataRoom(connection) >= 0) {
            return fastOpenWrite(c, fd, length, flags);
        }
        final ScriptRunner.Result broken = writeError(connection);
        if (broken != null) {
            return broken;
        }
        final boolean more = (flags & MessageFlags.MORE) != 0;
        // MSG_ZEROCOPY without SO_ZEROCOPY is a plain send, as Linux ignores the flag then.
        final boolean tracked = (flags & MessageFlags.ZEROCOPY) != 0 && fd.zerocopy;
        if (tracked && tcp.sendCompletions().pending(connection) >= SendCompletions.MAX_PENDING) {
            return ScriptRunner.Result.fail("ENOBUFS");
        }
        final boolean endsRecord = (flags & MessageFlags.EOR) != 0;
        if (endsRecord && tcp.socketOptions().recordEndsFull(connection)) {
            return ScriptRunner.Result.fail("ENOBUFS");
        }
        if (fd.nonBlocking() || (flags & MessageFlags.DONTWAIT) != 0) {
            if (runner.dialect() == ScriptDialect.LINUX && tcp.state(connection) == TcpState.SYN_SENT) {
                // Linux's tcp_sendmsg waits for the connection (sk_stream_wait_connect): not at all when it may not.
                return ScriptRunner.Result.fail("EAGAIN");
            }
            final int written = fill(connection, length, more);
            track(tracked, connection, written);
            endRecord(endsRecord && written == length, connection);
            return written == 0 && length > 0 ? ScriptRunner.Result.fail("EAGAIN") : ScriptRunner.Result.ok(written);
        }
        // A blocking write returns when every byte is in the send buffer (or the connection failed), as Linux's.
        final int[] written = {0};
        final BooleanSupplier done = () -> {
            if (writeError(connection) != null) {
                return true;
            }
            written[0] += fill(connection, length - written[0], more);
            return written[0] == length;
        };
        return runner.blockThen(c, done, "room in the send buffer for all " + length + " bytes", () -> {
            track(tracked, connection, written[0]);
            endRecord(endsRecord && written[0] == length, connection);
            final ScriptRunner.Result error = writeError(connection);
            return error != null && written[0] == 0 ? error : ScriptRunner.Result.ok(written[0]);
        });
    }

    /** MSG_EOR, once every byte of the call is in the send buffer, as Linux marks the record's last buffer then. */
    private void endRecord(boolean ends, int connection) {
        if (ends) {
            tcp.socketOptions().endRecord(connection);
        }
    }

    /** A MSG_ZEROCOPY send that wrote bytes takes the next id; one that wrote none takes none, as Linux's. */
    private void track(boolean tracked, int connection, int written) {
        if (tracked && written > 0) {
            tcp.sendCompletions().track(connection);
        }
    }

    /**
     * Writes up to {@code length} bytes into the send buffer and tells the stack; returns how many. Each byte is
     * {@link ScriptPayload#tern} of the sequence number it will go out with, which the runner checks on the wire.
     */
    private int fill(int connection, int length, boolean more) {
        final ByteRing ring = tcp.sendBuffer(connection);
        if (ring == null || length == 0) {
            return 0;
        }
        // The ring holds the bytes from SND.UNA on (after the SYN while it is unacknowledged).
        final TcpInfo info = tcp.info(connection);
        final boolean synUnacked = info.state() == TcpState.SYN_SENT || info.state() == TcpState.SYN_RECEIVED;
        long seq = Integer.toUnsignedLong(info.sndUna()) + ring.available() + (synUnacked ? 1 : 0);
        // With TCP_NOTSENT_LOWAT a write takes bytes only while fewer than the mark wait unsent, as Linux's
        // tcp_sendmsg waits for memory: it goes a segment at a time, letting each leave, and stops at the mark
        // (Linux checks the mark before each buffer of up to 64 KB, so it may take more).
        final boolean marked = tcp.socketOptions().notsentLowat(connection) > 0;
        int written = 0;
        while (written < length && ring.freeSpace() > 0 && (!marked || tcp.socketOptions().belowNotsentLowat(connection))) {
            final int piece = marked ? Math.max(1, tcp.mss(connection)) : (int) scratch.byteSize();
            final int chunk = Math.min(Math.min(length - written, ring.freeSpace()), Math.min(piece,
                (int) scratch.byteSize()));
            ScriptPayload.fill(scratch, 0, chunk, seq, runner.applicationBytes());
            final int put = ring.write(scratch, 0, chunk);
            written += put;
            seq += put;
            if (marked) {
                sendable(connection, more);
            }
        }
        if (written > 0 && !marked) {
            sendable(connection, more);
        }
        return written;
    }

    /** The stack may send what was written; with MSG_MORE a short tail waits (TcpSocketOptions.sendableMore). */
    private void sendable(int connection, boolean more) {
        if (more) {
            tcp.socketOptions().sendableMore(connection, runner.nowNs());
        } else {
            tcp.sendable(connection, runner.nowNs());
        }
    }

    /**
     * The connection's error if no call has reported it yet, which this call then does: as Linux's sock_error, an
     * error is reported once (by a read, a write, connect or SO_ERROR); after it a read finds the end of the stream and
     * a write EPIPE.
     */
    private int takeError(int connection) {
        final int error = tcp.error(connection);
        return error == TcpError.NONE || !errorsTaken.add(connection) ? TcpError.NONE : error;
    }

    /** Connections whose error a call has reported ({@link #takeError}). */
    private final java.util.Set<Integer> errorsTaken = new java.util.HashSet<>();

    private ScriptRunner.Result writeError(int connection) {
        final int error = takeError(connection);
        if (error != TcpError.NONE) {
            return ScriptRunner.Result.fail(errno(error));
        }
        final int state = tcp.state(connection);
        if (state == TcpState.SYN_SENT || state == TcpState.SYN_RECEIVED) {
            return null;
        }
        return TcpState.canSend(state) ? null : ScriptRunner.Result.fail("EPIPE");
    }

    private ScriptRunner.Result read(ScriptLine.Call c) {
        arguments(c, 3, 4);
        final int flags = c.args().size() == 4 ? MessageFlags.receive(runner, c, 3) : 0;
        return read(c, fd(c), (int) number(c, 2), flags, -1);
    }

    /**
     * Reads up to {@code length} bytes, checking them against the remote's pattern (read, recv, recvmsg); with
     * MSG_PEEK the bytes stay, with MSG_WAITALL a blocking read waits for all of them (or the end, or an error).
     */
    private ScriptRunner.Result read(ScriptLine.Call c, Fd fd, int length, int flags, long expectedInq) {
        if (fd.udp != null) {
            return receiveDatagram(c, fd, length, flags);
        }
        if (fd.connection < 0) {
            return ScriptRunner.Result.fail("ENOTCONN");
        }
        final int connection = fd.connection;
        final boolean nonBlocking = fd.nonBlocking() || (flags & MessageFlags.DONTWAIT) != 0;
        final boolean all = (flags & MessageFlags.WAITALL) != 0 && !nonBlocking;
        final BooleanSupplier ready = () -> readReady(connection) && (!all || tcp.receiveShutdown(connection)
            || tcp.error(connection) != TcpError.NONE || readable(connection) >= length);
        if (!fd.readShut && !ready.getAsBoolean()) {
            if (nonBlocking) {
                return ScriptRunner.Result.fail("EAGAIN");
            }
            return runner.blockThen(c, ready, all ? "all " + length + " bytes to read" : "data to read",
                () -> readNow(c, fd, length, flags, expectedInq));
        }
        return readNow(c, fd, length, flags, expectedInq);
    }

    private int readable(int connection) {
        final ByteRing ring = tcp.receiveBuffer(connection);
        return ring == null ? 0 : ring.available();
    }

    /**
     * Reads, checking each byte against {@link ScriptPayload#remote} of the sequence number it came with, then the
     * TCP_CM_INQ a recvmsg expects ({@code expectedInq}, -1 for none).
     */
    private ScriptRunner.Result readNow(ScriptLine.Call c, Fd fd, int length, int flags, long expectedInq) {
        final int connection = fd.connection;
        final ByteRing ring = tcp.receiveBuffer(connection);
        final int available = ring == null ? 0 : ring.available();
        if (available == 0) {
            final int error = takeError(connection);
            if (error != TcpError.NONE) {
                return ScriptRunner.Result.fail(errno(error));
            }
            checkInq(c, fd, expectedInq);
            return ScriptRunner.Result.ok(0);
        }
        final boolean peek = (flags & MessageFlags.PEEK) != 0;
        long seq = firstUnreadSeq(connection, available);
        int read = 0;
        while (read < length && read < available) {
            final int chunk = Math.min(Math.min(length, available) - read, (int) scratch.byteSize());
            final int got;
            if (peek) {
                ring.peek(ring.consumerPosition() + read, scratch, 0, chunk);
                got = chunk;
            } else {
                got = ring.read(scratch, 0, chunk);
            }
            if (seq >= 0) {
                final int wrong = ScriptPayload.firstDifference(scratch, 0, got, seq, ScriptPayload::remote);
                if (wrong >= 0) {
                    throw runner.failure(c.line(), c.name() + " returned data the remote did not send there: byte "
                        + (read + wrong) + " of what it read (the remote's sequence number "
                        + ((seq + wrong - ScriptRunner.REMOTE_ISN) & 0xFFFF_FFFFL) + ") "
                        + ScriptPayload.difference(scratch, 0, wrong, seq, ScriptPayload::remote));
                }
                seq += got;
            }
            read += got;
        }
        if (!peek) {
            tcp.consumed(connection, runner.nowNs());
        }
        checkInq(c, fd, expectedInq);
        return ScriptRunner.Result.ok(read);
    }

    /**
     * TCP_INQ's control message: the bytes left to read after the call, 1 when none are left and the peer's FIN
     * arrived (Linux's tcp_inq_hint, so that a reader knows to expect the end); only with TCP_INQ on, as Linux sends
     * it only then.
     */
    private void checkInq(ScriptLine.Call c, Fd fd, long expected) {
        if (expected < 0) {
            return;
        }
        if (!fd.inq) {
            throw runner.failure(c.line(), "recvmsg returned no TCP_CM_INQ control message: TCP_INQ is not set on "
                + "file descriptor " + fd.number + " (setsockopt(fd, SOL_TCP, TCP_INQ, [1], 4))");
        }
        final int left = readable(fd.connection);
        final long inq = left == 0 && tcp.receiveShutdown(fd.connection) ? 1 : left;
        if (inq != expected) {
            throw runner.failure(c.line(), "recvmsg's TCP_CM_INQ gave " + inq + ", the script expects " + expected);
        }
    }

    /**
     * The sequence number of the first of the {@code available} bytes waiting in the receive ring: RCV.NXT less
     * them (and less the FIN, once received); -1 when the connection is gone or closed and it cannot be told.
     */
    private long firstUnreadSeq(int connection, int available) {
        final TcpInfo info = tcp.info(connection);
        if (info == null || info.state() == TcpState.CLOSED) {
            return -1;
        }
        final int state = info.state();
        final boolean finReceived = state == TcpState.CLOSE_WAIT || state == TcpState.CLOSING
            || state == TcpState.LAST_ACK || state == TcpState.TIME_WAIT;
        return (Integer.toUnsignedLong(info.rcvNxt()) - available - (finReceived ? 1 : 0)) & 0xFFFF_FFFFL;
    }

    private boolean readReady(int connection) {
        final ByteRing ring = tcp.receiveBuffer(connection);
        return (ring != null && ring.available() > 0) || tcp.receiveShutdown(connection)
            || tcp.error(connection) != TcpError.NONE;
    }

    // --------------------------------------------------------------------------------------------------- UDP

    /**
     * {@code sendto(fd, ..., N, FLAGS, ADDRESS, ...)}: on UDP a datagram of N bytes to the remote's port 8080; on TCP a
     * Fast Open connect with MSG_FASTOPEN, else a send (Linux's tcp_sendmsg ignores the address).
     */
    private ScriptRunner.Result sendto(ScriptLine.Call c) {
        arguments(c, 6);
        final Fd fd = fd(c);
        final int flags = MessageFlags.send(runner, c, 3);
        final String address = c.args().get(4);
        if (!address.equals("...") && !(address.equals("AF_UNSPEC") && fd.udp == null)) {
            throw runner.failure(c.line(), "sendto's address is the remote's, written '...' (AF_UNSPEC on TCP), not '"
                + address + "'");
        }
        if (fd.udp == null && (flags & MessageFlags.FASTOPEN) != 0) {
            // Linux's tcp_sendmsg_fastopen refuses an AF_UNSPEC address (nothing to connect to), and any while the
            // client's Fast Open is off.
            return address.equals("AF_UNSPEC") || !fastOpenClient() ? ScriptRunner.Result.fail("EOPNOTSUPP")
                : fastOpenWrite(c, fd, (int) number(c, 2), flags);
        }
        if (fd.udp == null && flags == 0 && fd.fastOpenQueue > 0 && fd.listener < 0 && fd.connection < 0) {
            // FreeBSD's client: TCP_FASTOPEN on a socket that then sends to an address connects with Fast Open and
            // queues all the data at once, the SYN carrying what it can (a cookie cached) or asking for a cookie.
            final ScriptRunner.Result refused = open(fd, true);
            if (refused != null) {
                return refused;
            }
            final int length = (int) number(c, 2);
            final int written = fill(fd.connection, length, false);
            if (written == 0) {
                tcp.sendable(fd.connection, runner.nowNs());
            }
            runner.poll();
            return ScriptRunner.Result.ok(written);
        }
        if (fd.udp == null) {
            return write(c, fd, (int) number(c, 2), flags);
        }
        fastOpenOnTcpOnly(c, fd, flags);
        return sendDatagram(c, fd, (int) number(c, 2), true, flags);
    }

    /** {@code recvfrom(fd, ..., N, 0, ..., ...)}: the next datagram, at most N bytes of it. */
    private ScriptRunner.Result recvfrom(ScriptLine.Call c) {
        arguments(c, 6);
        final int flags = MessageFlags.receive(runner, c, 3);
        final Fd fd = fd(c);
        if (fd.udp == null) {
            throw runner.failure(c.line(), "recvfrom is supported on UDP sockets only; use read or recv for TCP");
        }
        return receiveDatagram(c, fd, (int) number(c, 2), flags);
    }

    private ScriptRunner.Result sendDatagram(ScriptLine.Call c, Fd fd, int length, boolean addressed, int flags) {
        if (length > scratch.byteSize()) {
            return ScriptRunner.Result.fail("EMSGSIZE");
        }
        final UdpSocket udp = fd.udp;
        // sendto answers the remote's port the socket last received from (a server replying), else port 8080.
        final int port = !addressed ? 0 : udp.lastSourcePort() != 0 ? udp.lastSourcePort()
            : ScriptRunner.SCRIPT_PORT;
        final ScriptRunner.Result[] outcome = {null};
        final BooleanSupplier sent = () -> {
            // Filled at each try: a pending call on another descriptor may have used the scratch meanwhile.
            ScriptPayload.fill(scratch, 0, length, 0, ScriptPayload::ternDatagram);
            try {
                final boolean queued = !addressed ? udp.send(scratch, 0, length)
                    : udp.ipv6() ? udp.sendTo(ScriptIpVersion.REMOTE_IPV6, port, scratch, 0, length)
                    : udp.sendTo(runner.remoteAddress(), port, scratch, 0, length);
                if (queued) {
                    outcome[0] = ScriptRunner.Result.ok(length);
                }
            } catch (TernSocketException e) {
                outcome[0] = ScriptRunner.Result.fail(socketErrno(e.error()));
            }
            return outcome[0] != null;
        };
        if (!sent.getAsBoolean()) {
            if (fd.nonBlocking() || (flags & MessageFlags.DONTWAIT) != 0) {
                return ScriptRunner.Result.fail("EAGAIN");
            }
            return runner.blockThen(c, sent, "room in the send queue", () -> afterSend(udp, port, outcome[0]));
        }
        return afterSend(udp, port, outcome[0]);
    }

    /** The datagram leaves on the stack's next turn; an unbound socket then has its ephemeral port. */
    private ScriptRunner.Result afterSend(UdpSocket udp, int port, ScriptRunner.Result result) {
        runner.poll();
        if (udp.localPort() != 0 && port != 0) {
            runner.udpFlow(udp.localPort(), port);
        }
        return result;
    }

    /** The next datagram, at most {@code length} bytes of it; with MSG_PEEK it stays, to be read again whole. */
    private ScriptRunner.Result receiveDatagram(ScriptLine.Call c, Fd fd, int length, int flags) {
        final boolean peek = (flags & MessageFlags.PEEK) != 0;
        final UdpSocket udp = fd.udp;
        final int capacity = (int) Math.min(length, scratch.byteSize());
        final ScriptRunner.Result[] outcome = {null};
        final BooleanSupplier received = () -> {
            try {
                final int got = peek ? udp.peek(scratch, 0, capacity) : udp.receive(scratch, 0, capacity);
                if (got >= 0) {
                    final int wrong = ScriptPayload.firstDifference(scratch, 0, got, 0, ScriptPayload::remoteDatagram);
                    if (wrong >= 0) {
                        throw runner.failure(c.line(), c.name() + " returned a datagram the remote did not send: its "
                            + "byte " + wrong + " " + ScriptPayload.difference(scratch, 0, wrong, 0,
                            ScriptPayload::remoteDatagram));
                    }
                    outcome[0] = ScriptRunner.Result.ok(got);
                }
            } catch (TernSocketException e) {
                outcome[0] = ScriptRunner.Result.fail(socketErrno(e.error()));
            }
            return outcome[0] != null;
        };
        if (!received.getAsBoolean()) {
            if (fd.nonBlocking() || (flags & MessageFlags.DONTWAIT) != 0) {
                return ScriptRunner.Result.fail("EAGAIN");
            }
            return runner.blockThen(c, received, "a datagram to read", () -> outcome[0]);
        }
        return outcome[0];
    }

    private static final java.util.regex.Pattern IOV = java.util.regex.Pattern.compile("msg_iov\\((\\d+)\\)\\s*=\\s*\\[(.*)]");
    private static final java.util.regex.Pattern IOV_ELEMENT = java.util.regex.Pattern.compile(
        "\\{\\s*\\.\\.\\.\\s*,\\s*(\\d+)\\s*}");

    /**
     * {@code sendmsg(fd, {msg_name(...)=..., msg_iov(N)=[{..., LEN}, ...], msg_flags=0}, 0)}: as a write of the
     * iovec's total length (the bytes of each element follow one another in the stream).
     */
    private ScriptRunner.Result sendmsg(ScriptLine.Call c) {
        arguments(c, 3);
        final int flags = MessageFlags.send(runner, c, 2);
        final int length = messageLength(c, false);
        final Fd fd = fd(c);
        fastOpenOnTcpOnly(c, fd, flags);
        return (flags & MessageFlags.FASTOPEN) != 0 ? fastOpenWrite(c, fd, length, flags) : write(c, fd, length, flags);
    }

    private void fastOpenOnTcpOnly(ScriptLine.Call c, Fd fd, int flags) {
        if ((flags & MessageFlags.FASTOPEN) != 0 && fd.udp != null) {
            throw runner.failure(c.line(), c.name() + " flag MSG_FASTOPEN is for TCP sockets, not UDP");
        }
    }

    /**
     * {@code recvmsg(fd, {msg_name(...)=..., msg_iov(N)=[{..., LEN}, ...], msg_flags=0}, 0)}: as a read of up to the
     * iovec's total length, TCP only; the returned msg_flags, 0, is what the script must expect.
     */
    private ScriptRunner.Result recvmsg(ScriptLine.Call c) {
        arguments(c, 3);
        if ((MessageFlags.receive(runner, c, 2) & MessageFlags.ERRQUEUE) != 0) {
            final Fd fd = fd(c);
            if (fd.udp != null) {
                throw runner.failure(c.line(), "recvmsg MSG_ERRQUEUE is supported on TCP sockets only (their send "
                    + "completions)");
            }
            return ScriptErrorQueue.receive(runner, c, tcp.sendCompletions(), fd.connection);
        }
        final int length = messageLength(c, true);
        final Fd fd = fd(c);
        if (fd.udp != null) {
            throw runner.failure(c.line(), "recvmsg is supported on TCP sockets only (a UDP datagram's truncation, "
                + "MSG_TRUNC in msg_flags, is not known to the runner); use recvfrom");
        }
        final java.util.regex.Matcher inq = INQ_CMSG.matcher(c.args().get(1).replace(" ", "").replace("\t", "")
            .replace("\n", ""));
        return read(c, fd, length, MessageFlags.receive(runner, c, 2), inq.find() ? Long.parseLong(inq.group(1)) : -1);
    }

    /** recvmsg's one control message Tern has: TCP_INQ's bytes left to read. */
    private static final java.util.regex.Pattern INQ_CMSG = java.util.regex.Pattern.compile(
        "msg_control=\\[\\{cmsg_level=(?:SOL_TCP|IPPROTO_TCP),cmsg_type=TCP_CM_INQ,cmsg_data=(\\d+)}]");

    /**
     * The total length of a msghdr literal's iovec, after checking that the message holds nothing Tern cannot
     * express: no control messages but, for recvmsg ({@code receive}), TCP_CM_INQ; msg_flags 0.
     */
    private int messageLength(ScriptLine.Call c, boolean receive) {
        final String message = c.args().get(1);
        final List<String> fields = message.startsWith("{") && message.endsWith("}")
            ? ScriptParser.splitOutside(message.substring(1, message.length() - 1), ',') : null;
        if (fields == null) {
            throw runner.failure(c.line(), c.name() + " takes a struct msghdr: {msg_name(...)=..., msg_iov(N)=[{..., "
                + "LEN}, ...], msg_flags=0}");
        }
        long length = -1;
        for (String field : fields) {
            final String f = field.strip();
            final java.util.regex.Matcher iov = IOV.matcher(f);
            if (iov.matches()) {
                length = iovecLength(c, Integer.parseInt(iov.group(1)), iov.group(2));
            } else if (f.replace(" ", "").equals("msg_name(...)=...") || f.replace(" ", "").equals("msg_control=[]")
                || f.replace(" ", "").equals("msg_flags=0")) {
                // The remote's address (the runner has one), no control data, no flags: nothing to check.
            } else if (receive && INQ_CMSG.matcher(f.replaceAll("\\s", "")).matches()) {
                // TCP_INQ's count, checked after the read.
            } else if (f.startsWith("msg_control")) {
                throw runner.failure(c.line(), c.name() + " with control messages (cmsg) other than recvmsg's "
                    + "TCP_CM_INQ is not supported: Tern has no other ancillary data (timestamps, error queues)");
            } else if (f.startsWith("msg_flags")) {
                throw runner.failure(c.line(), c.name() + " msg_flags other than 0 are not supported, not '"
                    + f.substring(f.indexOf('=') + 1).strip() + "'");
            } else {
                throw runner.failure(c.line(), "unexpected '" + f + "' in " + c.name() + "'s struct msghdr (msg_name, "
                    + "msg_iov, msg_flags, msg_control)");
            }
        }
        if (length < 0) {
            throw runner.failure(c.line(), c.name() + "'s struct msghdr needs msg_iov(N)=[{..., LEN}, ...]");
        }
        return (int) length;
    }

    /** {@code [{..., LEN}, ...]}: {@code count} elements, their lengths added. */
    private long iovecLength(ScriptLine.Call c, int count, String elements) {
        final List<String> parts = ScriptParser.splitOutside(elements, ',');
        long total = 0;
        int found = 0;
        for (String part : parts == null ? List.<String>of() : parts) {
            final java.util.regex.Matcher m = IOV_ELEMENT.matcher(part.strip());
            if (!m.matches()) {
                throw runner.failure(c.line(), "bad iovec element '" + part.strip() + "': write {..., LEN}");
            }
            total += Long.parseLong(m.group(1));
            found++;
        }
        if (found != count) {
            throw runner.failure(c.line(), "msg_iov(" + count + ") lists " + found + " element"
                + (found == 1 ? "" : "s"));
        }
        if (total > Integer.MAX_VALUE) {
            throw runner.failure(c.line(), "an iovec of " + total + " bytes is more than one call can move");
        }
        return total;
    }

    private ScriptRunner.Result close(ScriptLine.Call c) {
        arguments(c, 1);
        final Fd fd = fd(c);
        if (fd.udp != null) {
            fd.udp.close();
        }
        if (fd.connection >= 0 && fd.lingerNs > 0 && !fd.abortOnClose && readable(fd.connection) == 0) {
            return lingeringClose(c, fd);
        }
        if (fd.connection >= 0) {
            if (fd.abortOnClose) {
                tcp.abort(fd.connection, runner.nowNs());
            } else {
                tcp.close(fd.connection, runner.nowNs());
            }
        }
        if (fd.listener >= 0) {
            tcp.closeListener(fd.listener, runner.nowNs());
        }
        epoll.close(fd.number);
        fds.remove(fd.number, fd);
        return ScriptRunner.Result.ok(0);
    }

    // ------------------------------------------------------------------------------------------------ epoll

    /** {@code epoll_create(N)} or {@code epoll_create1(0)}: a new epoll instance's descriptor. */
    private ScriptRunner.Result epollCreate(ScriptLine.Call c) {
        arguments(c, 1);
        final long size = number(c, 0);
        if (c.name().equals("epoll_create") ? size <= 0 : size != 0) {
            return ScriptRunner.Result.fail("EINVAL");
        }
        final Fd fd = open(c);
        epoll.create(fd.number);
        return ScriptRunner.Result.ok(fd.number);
    }

    private static final java.util.regex.Pattern EPOLL_EVENT = java.util.regex.Pattern.compile(
        "\\{\\s*events\\s*=\\s*([A-Z|\\s]+|0)\\s*,\\s*(fd|ptr|u32|u64)\\s*=\\s*(\\d+)\\s*}");

    /** {@code epoll_ctl(EPFD, EPOLL_CTL_ADD, FD, {events=EPOLLIN|EPOLLET, fd=FD})}, MOD and DEL too. */
    private ScriptRunner.Result epollControl(ScriptLine.Call c) {
        arguments(c, 4);
        final int epfd = (int) number(c, 0);
        final String operation = c.args().get(1);
        if (!epoll.isEpoll(epfd)) {
            return ScriptRunner.Result.fail(fds.containsKey(epfd) ? "EINVAL" : "EBADF");
        }
        if (!List.of("EPOLL_CTL_ADD", "EPOLL_CTL_MOD", "EPOLL_CTL_DEL").contains(operation)) {
            throw runner.failure(c.line(), "epoll_ctl takes EPOLL_CTL_ADD, EPOLL_CTL_MOD or EPOLL_CTL_DEL, not "
                + operation);
        }
        final int target = (int) number(c, 2);
        if (!fds.containsKey(target)) {
            return ScriptRunner.Result.fail("EBADF");
        }
        int events = 0;
        if (!operation.equals("EPOLL_CTL_DEL")) {
            final java.util.regex.Matcher m = EPOLL_EVENT.matcher(c.args().get(3));
            if (!m.matches()) {
                throw runner.failure(c.line(), "epoll_ctl takes {events=EPOLLIN|..., fd=N}, not " + c.args().get(3));
            }
            events = epollBits(c, m.group(1));
        }
        // Linux's epoll_ctl: EPOLLEXCLUSIVE only on ADD, with no bit beyond IN, OUT, ERR, HUP and ET; an exclusive
        // entry cannot be modified.
        final int exclusiveAllowed = ScriptEpoll.EPOLLEXCLUSIVE | ScriptEpoll.EPOLLIN | ScriptEpoll.EPOLLOUT
            | ScriptEpoll.EPOLLERR | ScriptEpoll.EPOLLHUP | ScriptEpoll.EPOLLET;
        if ((events & ScriptEpoll.EPOLLEXCLUSIVE) != 0 && (!operation.equals("EPOLL_CTL_ADD")
            || (events & ~exclusiveAllowed) != 0) || operation.equals("EPOLL_CTL_MOD") && epoll.exclusive(epfd, target)) {
            return ScriptRunner.Result.fail("EINVAL");
        }
        return epoll.control(epfd, operation, target, events) ? ScriptRunner.Result.ok(0)
            : ScriptRunner.Result.fail(operation.equals("EPOLL_CTL_ADD") ? "EEXIST" : "ENOENT");
    }

    /**
     * {@code epoll_wait(EPFD, {events=EPOLLIN, fd=N}, MAX, MS) = R}: waits up to MS as poll does (START...END too),
     * then compares the first ready entry with the one written ({@code {events=0, ptr=0}} for none).
     */
    private ScriptRunner.Result epollWait(ScriptLine.Call c) {
        arguments(c, 4);
        final int epfd = (int) number(c, 0);
        if (!epoll.isEpoll(epfd)) {
            return ScriptRunner.Result.fail(fds.containsKey(epfd) ? "EINVAL" : "EBADF");
        }
        final java.util.regex.Matcher m = EPOLL_EVENT.matcher(c.args().get(1));
        if (!m.matches()) {
            throw runner.failure(c.line(), "epoll_wait takes one struct epoll_event, {events=EPOLLIN|..., fd=N} "
                + "(or {events=0, ptr=0} for none), not " + c.args().get(1));
        }
        final int max = (int) number(c, 2);
        final long timeoutMs = number(c, 3);
        final java.util.function.IntUnaryOperator readiness = number -> {
            final Fd fd = fds.get(number);
            return fd == null ? 0 : revents(fd);
        };
        final BooleanSupplier ready = () -> !epoll.ready(epfd, max, readiness, false).isEmpty();
        final java.util.function.Supplier<ScriptRunner.Result> result = () -> {
            final List<ScriptEpoll.Ready> got = epoll.ready(epfd, max, readiness, true);
            final int wantEvents = epollBits(c, m.group(1));
            final int gotEvents = got.isEmpty() ? 0 : got.getFirst().events();
            if (gotEvents != wantEvents || (!got.isEmpty() && m.group(2).equals("fd")
                && got.getFirst().fd() != Integer.parseInt(m.group(3)))) {
                throw runner.failure(c.line(), "epoll_wait gave " + (got.isEmpty() ? "no event" : "{events="
                    + epollNames(gotEvents) + ", fd=" + got.getFirst().fd() + "}") + ", the script expects "
                    + c.args().get(1));
            }
            return ScriptRunner.Result.ok(got.size());
        };
        final long deadline = timeoutMs < 0 ? runner.now() + ScriptRunner.BLOCK_LIMIT_NS
            : runner.now() + timeoutMs * 1_000_000L;
        if (timeoutMs != 0 && runner.spans(c)) {
            return runner.pend(c, () -> ready.getAsBoolean() || (timeoutMs >= 0 && runner.now() >= deadline),
                "an event on epoll descriptor " + epfd, result, timeoutMs < 0 ? Long.MAX_VALUE : deadline);
        }
        if (timeoutMs != 0) {
            runner.advance(deadline, ready);
        }
        return result.get();
    }

    private int epollBits(ScriptLine.Call c, String text) {
        int bits = 0;
        for (String name : text.split("\\|")) {
            bits |= switch (name.strip()) {
                case "EPOLLIN" -> ScriptEpoll.EPOLLIN;
                case "EPOLLOUT" -> ScriptEpoll.EPOLLOUT;
                case "EPOLLERR" -> ScriptEpoll.EPOLLERR;
                case "EPOLLHUP" -> ScriptEpoll.EPOLLHUP;
                case "EPOLLET" -> ScriptEpoll.EPOLLET;
                case "EPOLLONESHOT" -> ScriptEpoll.EPOLLONESHOT;
                case "EPOLLEXCLUSIVE" -> ScriptEpoll.EPOLLEXCLUSIVE;
                case "0" -> 0;
                default -> throw runner.failure(c.line(), "epoll event '" + name.strip() + "' is not supported "
                    + "(EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP, EPOLLET, EPOLLONESHOT, EPOLLEXCLUSIVE; Tern's epoll has "
                    + "no EPOLLRDHUP or EPOLLPRI)");
            };
        }
        return bits;
    }

    private static String epollNames(int bits) {
        final String poll = pollNames(bits & (POLLIN | POLLOUT | POLLERR | POLLHUP));
        return poll.equals("0") ? "0" : poll.replace("POLL", "EPOLL");
    }

    /**
     * close with SO_LINGER's time: the FIN goes after the data, and the call returns once the peer acknowledged both
     * (or the connection ended) or when the time is up, as Linux's close waits (sk_stream_wait_close), with 0 either
     * way; the connection then goes on closing as a plain close. Written {@code START...END} it is pending meanwhile.
     */
    private ScriptRunner.Result lingeringClose(ScriptLine.Call c, Fd fd) {
        final int connection = fd.connection;
        tcp.shutdownOutput(connection, runner.nowNs());
        fds.remove(fd.number, fd);
        final long deadline = runner.now() + fd.lingerNs;
        final BooleanSupplier done = () -> tcp.outputAcknowledged(connection) || tcp.state(connection) == TcpState.CLOSED
            || runner.now() >= deadline;
        final java.util.function.Supplier<ScriptRunner.Result> finish = () -> {
            tcp.close(connection, runner.nowNs());
            return ScriptRunner.Result.ok(0);
        };
        if (runner.spans(c)) {
            return runner.pend(c, done, "the peer to acknowledge the data and FIN (SO_LINGER)", finish, deadline);
        }
        runner.advance(deadline, done);
        return finish.get();
    }

    private ScriptRunner.Result shutdown(ScriptLine.Call c) {
        arguments(c, 2);
        final Fd fd = fd(c);
        final String how = c.args().get(1);
        if (!how.equals("SHUT_WR") && !how.equals("SHUT_RDWR") && !how.equals("SHUT_RD")) {
            throw runner.failure(c.line(), "shutdown(" + how + ") is not supported: SHUT_RD, SHUT_WR or SHUT_RDWR");
        }
        if (fd.connection < 0) {
            return ScriptRunner.Result.fail("ENOTCONN");
        }
        // The receive side is the application's only (Tern's TCP has no SHUT_RD, nor does TCP: nothing goes on the
        // wire): reads stop waiting, as Linux's do after RCV_SHUTDOWN.
        fd.readShut = !how.equals("SHUT_WR");
        if (!how.equals("SHUT_RD")) {
            tcp.shutdownOutput(fd.connection, runner.nowNs());
        }
        return ScriptRunner.Result.ok(0);
    }

    private ScriptRunner.Result fcntl(ScriptLine.Call c) {
        final Fd fd = fd(c);
        final String command = c.args().size() > 1 ? c.args().get(1) : "";
        if (command.equals("F_GETFL") && c.args().size() == 2) {
            return ScriptRunner.Result.ok(fd.flags);
        }
        if (command.equals("F_SETFL") && c.args().size() == 3) {
            int flags = 0;
            for (String name : c.args().get(2).split("\\|")) {
                flags |= switch (name.strip()) {
                    case "O_RDWR" -> O_RDWR;
                    case "O_NONBLOCK" -> O_NONBLOCK;
                    case "0" -> 0;
                    default -> throw runner.failure(c.line(), "fcntl flag '" + name.strip() + "' is not supported (O_RDWR, "
                        + "O_NONBLOCK)");
                };
            }
            fd.flags = flags;
            return ScriptRunner.Result.ok(0);
        }
        throw runner.failure(c.line(), "only fcntl(fd, F_GETFL) and fcntl(fd, F_SETFL, flags) are supported");
    }

    /**
     * {@code ioctl(fd, FIONREAD or SIOCINQ, [N])}: the bytes waiting to be read, compared with N (for UDP, the next
     * datagram's length as Linux's SIOCINQ gives it is not kept: TCP only).
     */
    private ScriptRunner.Result ioctl(ScriptLine.Call c) {
        arguments(c, 3);
        final Fd fd = fd(c);
        final String request = c.args().get(1);
        if (!request.equals("FIONREAD") && !request.equals("SIOCINQ")) {
            throw runner.failure(c.line(), "ioctl " + request + " is not supported (FIONREAD, SIOCINQ)");
        }
        if (fd.udp != null) {
            throw runner.failure(c.line(), "ioctl " + request + " is supported on TCP sockets only");
        }
        if (fd.connection < 0) {
            return ScriptRunner.Result.fail("EINVAL");
        }
        final ByteRing ring = tcp.receiveBuffer(fd.connection);
        final long available = ring == null ? 0 : ring.available();
        final long expected = number(c, 2);
        if (available != expected) {
            throw runner.failure(c.line(), "ioctl " + request + " gave [" + available + "], the script expects ["
                + expected + "]");
        }
        return ScriptRunner.Result.ok(0);
    }

    private static final int POLLIN = 0x1;
    private static final int POLLOUT = 0x4;
    private static final int POLLERR = 0x8;
    private static final int POLLHUP = 0x10;
    /** Linux's POLLRDHUP: the peer shut its sending side (a FIN), or the connection is gone. */
    private static final int POLLRDHUP = 0x2000;

    /** {@code poll([{fd=4, events=POLLIN, revents=POLLIN}], 1, 0)}: one descriptor, waiting up to the timeout. */
    private ScriptRunner.Result poll(ScriptLine.Call c) {
        arguments(c, 3);
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile(
            "\\[\\s*\\{\\s*fd\\s*=\\s*(\\d+)\\s*,\\s*events\\s*=\\s*([A-Z|\\s]+|0)\\s*(?:,\\s*revents\\s*=\\s*([A-Z|\\s]+|0)"
                + "\\s*)?}\\s*]").matcher(c.args().getFirst());
        if (!m.matches() || number(c, 1) != 1) {
            throw runner.failure(c.line(), "poll supports one descriptor: poll([{fd=N, events=..., revents=...}], 1, ms)");
        }
        final Fd fd = fds.get(Integer.parseInt(m.group(1)));
        if (fd == null) {
            throw runner.failure(c.line(), "poll on file descriptor " + m.group(1) + ", which the script has not opened");
        }
        final int events = pollBits(c, m.group(2));
        final long timeoutMs = number(c, 2);
        final long deadline = timeoutMs < 0 ? runner.now() + ScriptRunner.BLOCK_LIMIT_NS : runner.now() + timeoutMs * 1_000_000L;
        final String expectedText = m.group(3);
        if (timeoutMs != 0 && runner.spans(c)) {
            // START...END poll: pending while the script's next lines run, until an event or its timeout.
            final boolean forever = timeoutMs < 0;
            return runner.pend(c, () -> (revents(fd) & (events | POLLERR | POLLHUP)) != 0
                    || (!forever && runner.now() >= deadline), "an event on file descriptor " + fd.number,
                () -> pollResult(c, fd, events, expectedText), forever ? Long.MAX_VALUE : deadline);
        }
        if (timeoutMs != 0) {
            final boolean ready = runner.advance(deadline, () -> (revents(fd) & (events | POLLERR | POLLHUP)) != 0);
            if (!ready && timeoutMs < 0) {
                throw runner.failure(c.line(), "poll blocked and did not return within " + ScriptRunner.BLOCK_LIMIT_NS / 1_000_000_000L
                    + " s of virtual time");
            }
        }
        return pollResult(c, fd, events, expectedText);
    }

    /** What poll returns now: 1 with the events that hold (checked against the script's revents), else 0. */
    private ScriptRunner.Result pollResult(ScriptLine.Call c, Fd fd, int events, String expectedText) {
        final int revents = revents(fd) & (events | POLLERR | POLLHUP);
        if (expectedText != null) {
            final int expected = pollBits(c, expectedText);
            if (expected != revents) {
                throw runner.failure(c.line(), "poll gave revents " + pollNames(revents) + ", the script expects "
                    + pollNames(expected));
            }
        }
        return ScriptRunner.Result.ok(revents == 0 ? 0 : 1);
    }

    private int revents(Fd fd) {
        int bits = 0;
        if (fd.udp != null) {
            final int ops = fd.udp.readyOps();
            return ((ops & SelectableSocket.READ) != 0 ? POLLIN : 0)
                | ((ops & SelectableSocket.WRITE) != 0 ? POLLOUT : 0)
                | ((ops & SelectableSocket.ERROR) != 0 ? POLLERR : 0);
        }
        if (fd.listener >= 0) {
            return tcp.acceptable(fd.listener) > 0 ? POLLIN : 0;
        }
        if (fd.connection < 0) {
            return POLLOUT | POLLHUP;
        }
        final int c = fd.connection;
        final int state = tcp.state(c);
        if (tcp.error(c) != TcpError.NONE) {
            // POLLERR while the error waits to be reported (Linux's sk_err); hung up and readable either way.
            bits |= (errorsTaken.contains(c) ? 0 : POLLERR) | POLLHUP | POLLIN | POLLOUT | POLLRDHUP;
        }
        if (tcp.receiveShutdown(c)) {
            // As Linux's tcp_poll on RCV_SHUTDOWN: readable (the end of the stream) and read-hung-up.
            bits |= POLLIN | POLLRDHUP;
        }
        // A send completion notice waiting is an error-queue entry: POLLERR, as Linux's tcp_poll.
        if (tcp.sendCompletions().ready(c)) {
            bits |= POLLERR;
        }
        if (state != TcpState.SYN_SENT && readReady(c)) {
            bits |= POLLIN;
        }
        final ByteRing ring = tcp.sendBuffer(c);
        // TCP_NOTSENT_LOWAT: writable only while fewer unsent bytes than the mark wait, as Linux's poll. A Fast Open
        // connect holding its SYN back is writable too: its first write goes in the SYN (Linux's TCP_FASTOPEN_CONNECT).
        if ((TcpState.canSend(state) || tcp.fastOpen().synDataRoom(c) >= 0) && ring != null && ring.freeSpace() > 0
            && tcp.socketOptions().belowNotsentLowat(c)) {
            bits |= POLLOUT;
        }
        return bits;
    }

    private int pollBits(ScriptLine.Call c, String text) {
        int bits = 0;
        for (String name : text.split("\\|")) {
            bits |= switch (name.strip()) {
                case "POLLIN" -> POLLIN;
                case "POLLOUT" -> POLLOUT;
                case "POLLERR" -> POLLERR;
                case "POLLHUP" -> POLLHUP;
                case "POLLRDHUP" -> POLLRDHUP;
                case "0" -> 0;
                default -> throw runner.failure(c.line(), "poll event '" + name.strip() + "' is not supported (POLLIN, "
                    + "POLLOUT, POLLERR, POLLHUP, POLLRDHUP)");
            };
        }
        return bits;
    }

    private static String pollNames(int bits) {
        final List<String> names = new ArrayList<>();
        if ((bits & POLLIN) != 0) {
            names.add("POLLIN");
        }
        if ((bits & POLLOUT) != 0) {
            names.add("POLLOUT");
        }
        if ((bits & POLLERR) != 0) {
            names.add("POLLERR");
        }
        if ((bits & POLLHUP) != 0) {
            names.add("POLLHUP");
        }
        if ((bits & POLLRDHUP) != 0) {
            names.add("POLLRDHUP");
        }
        return names.isEmpty() ? "0" : String.join("|", names);
    }

    private static String socketErrno(int socketError) {
        return switch (socketError) {
            case SocketError.CONNECTION_REFUSED -> "ECONNREFUSED";
            case SocketError.CONNECTION_RESET -> "ECONNRESET";
            case SocketError.TIMED_OUT -> "ETIMEDOUT";
            case SocketError.HOST_UNREACHABLE -> "EHOSTUNREACH";
            case SocketError.NET_UNREACHABLE -> "ENETUNREACH";
            case SocketError.MESSAGE_TOO_LONG -> "EMSGSIZE";
            case SocketError.ADDRESS_IN_USE -> "EADDRINUSE";
            case SocketError.NO_BUFFER -> "ENOBUFS";
            case SocketError.TOO_MANY_SOCKETS -> "EMFILE";
            case SocketError.ADDRESS_NOT_AVAILABLE -> "EADDRNOTAVAIL";
            case SocketError.BROADCAST_NOT_ENABLED -> "EACCES";
            case SocketError.NOT_CONNECTED -> "EDESTADDRREQ";
            case SocketError.PROTOCOL_ERROR -> "EPROTO";
            default -> "EINVAL";
        };
    }

    private static String errno(int tcpError) {
        return switch (tcpError) {
            case TcpError.REFUSED -> "ECONNREFUSED";
            case TcpError.RESET -> "ECONNRESET";
            case TcpError.TIMED_OUT -> "ETIMEDOUT";
            case TcpError.HOST_UNREACHABLE -> "EHOSTUNREACH";
            case TcpError.NET_UNREACHABLE -> "ENETUNREACH";
            case TcpError.ADDRESS_IN_USE -> "EADDRINUSE";
            case TcpError.NO_BUFFER -> "ENOBUFS";
            case TcpError.TOO_MANY_CONNECTIONS -> "EMFILE";
            case TcpError.ADDRESS_NOT_AVAILABLE -> "EADDRNOTAVAIL";
            case TcpError.ABORTED -> "ECONNABORTED";
            default -> "EINVAL";
        };
    }
}
