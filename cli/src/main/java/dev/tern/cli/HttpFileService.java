package dev.tern.cli;

import dev.tern.stack.NetStack;
import dev.tern.stack.TcpConnection;
import dev.tern.stack.TernSocketException;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A small HTTP/1.1 server of static files (RFC 9110, RFC 9112): GET and HEAD of files under one directory, enough
 * for curl, wget and load generators. Connections persist as HTTP/1.1 says (RFC 9112 §9.3): by default for 1.1, on
 * request ({@code Connection: keep-alive}) for 1.0, and a request with {@code Connection: close} gets the last
 * response. Pipelined requests are answered in order, one response after the other. A request head is at most
 * {@value #MAX_REQUEST} bytes (431 and close beyond); a request body announced by {@code Content-Length} is read and
 * dropped, one sent chunked is refused (501 and close), since nothing here takes a body. Paths that leave the
 * directory, or name a directory, are 404. Errors in the request (400, 405, 431, 501) close the connection after
 * their response. A connection that waits for a request longer than the keep-alive timeout (nginx's
 * {@code keepalive_timeout}, 75 s by default) is closed with a FIN and counted ({@code http.conn.idle_timeouts});
 * with a timeout of 0 every response closes its connection. Two more bounds keep a client that stops taking part
 * from holding a connection for ever, both as nginx's defaults: a response the client does not take (nothing of it
 * written or acknowledged for {@value #SEND_TIMEOUT_SECONDS} s, nginx's {@code send_timeout}), and a client that does
 * not close after the last response of a closing connection ({@value #LINGER_SECONDS} s without a byte either way
 * after our FIN, nginx's {@code lingering_time}). Either connection is reset (as nginx with
 * {@code reset_timedout_connection on}: a FIN would wait behind the data the client does not take) and counted
 * ({@code http.conn.send_timeouts}, {@code http.conn.linger_timeouts}). A request must arrive whole in time too: its
 * head within {@value #HEADER_TIMEOUT_SECONDS} s of its first byte (nginx's {@code client_header_timeout}) and its
 * body within as long of the head's end, however the bytes trickle in, else the connection gets a 408 and is closed
 * (counted in {@code http.conn.header_timeouts}, {@code http.conn.body_timeouts}): a byte every few seconds would
 * otherwise hold a connection without end, since each one re-arms the keep-alive wait. Polled from the command's loop like the other
 * services: a connection is served when a request arrives, when a pending response can go on, and once a second for
 * its timeouts, so idle connections cost a poll nothing.
 */
final class HttpFileService extends TcpService {
    private static final int MAX_REQUEST = 8192;
    /** As nginx's {@code keepalive_timeout} default. */
    static final int DEFAULT_KEEPALIVE_SECONDS = 75;
    /** As nginx's {@code send_timeout} default: how long a response may wait for the client to take any of it. */
    static final int SEND_TIMEOUT_SECONDS = 60;
    /** As nginx's {@code lingering_time} default: how long a closing connection waits for the client's FIN. */
    static final int LINGER_SECONDS = 30;
    /**
     * As nginx's {@code client_header_timeout} default: how long a request head may take from its first byte to its
     * last, and (a bound nginx sets between reads only) a body from the head's end to its own.
     */
    static final int HEADER_TIMEOUT_SECONDS = 60;
    private static final long SEND_TIMEOUT_NS = SEND_TIMEOUT_SECONDS * 1_000_000_000L;
    private static final long LINGER_NS = LINGER_SECONDS * 1_000_000_000L;
    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.RFC_1123_DATE_TIME;
    private static final byte[] END_OF_HEAD = {'\r', '\n', '\r', '\n'};

    private final Path root;
    /** 0: no connection persists (every response says {@code Connection: close}). */
    private final long keepAliveTimeoutNs;
    /**
     * How long a connection may wait for a request (the first one included: Tern has no separate header timeout,
     * nginx's {@code client_header_timeout}), measured from its last byte either way; the default when keep-alive is
     * off, so that a client that connects and says nothing is still let go.
     */
    private final long requestWaitNs;
    /** Connections closed because no request came within {@link #requestWaitNs}. */
    private final org.agrona.concurrent.status.AtomicCounter idleTimeouts;
    /** How long a request's head, and then its body, may take in all; a trickle does not extend it. */
    private final long requestDeadlineNs;
    /** Connections answered 408 and closed because a request head was not whole within the deadline. */
    private final org.agrona.concurrent.status.AtomicCounter headerTimeouts;
    /** Connections answered 408 and closed because a request body was not whole within the deadline. */
    private final org.agrona.concurrent.status.AtomicCounter bodyTimeouts;
    /** Connections reset because the client took nothing of a response for {@link #SEND_TIMEOUT_NS}. */
    private final org.agrona.concurrent.status.AtomicCounter sendTimeouts;
    /** Connections reset because the client did not close within {@link #LINGER_NS} of our last response's FIN. */
    private final org.agrona.concurrent.status.AtomicCounter lingerTimeouts;
    private final Map<TcpConnection, Exchange> exchanges = new HashMap<>();
    private final SmallFileCache smallFiles = new SmallFileCache();
    /**
     * Exchanges of closed connections, kept for the next ones: each holds an 8 KiB request buffer, which a server
     * taking a connection per request would otherwise allocate and zero for every one.
     */
    private final java.util.ArrayDeque<Exchange> idleExchanges = new java.util.ArrayDeque<>();
    private static final int MAX_IDLE_EXCHANGES = 1024;
    private static final MemorySegment NOTHING = MemorySegment.ofArray(new byte[0]);
    /** Request buffers of connections idling between requests, for the next connection that needs one. */
    private final java.util.ArrayDeque<byte[]> spareRequestBuffers = new java.util.ArrayDeque<>();

    /**
     * The bytes of small files, served from memory while the stat each request makes anyway shows the same size,
     * modification time and file key (device and inode): one {@code statx} per request instead of stat, access, open,
     * fstat, read and close (perf of {@code tern serve --http} showed those six system calls among its top samples).
     * As nginx's {@code open_file_cache} (which does not re-check each request), a file rewritten in place with the
     * same size within the file system's timestamp granularity (a few milliseconds) can be served as it was until
     * its next change. Least recently used entries go beyond {@value #MAX_BYTES} bytes in all.
     */
    private static final class SmallFileCache {
        static final int MAX_FILE = 64 * 1024;
        static final long MAX_BYTES = 16L << 20;

        private record Entry(byte[] bytes, FileTime modified, Object fileKey) {
        }

        private final LinkedHashMap<Path, Entry> entries = new LinkedHashMap<>(16, 0.75f, true);
        private long bytes;

        /** The file's bytes if it is small (read now if not cached or changed); null for a file to stream. */
        byte[] bytes(Path file, BasicFileAttributes attributes) throws IOException {
            if (attributes.size() > MAX_FILE) {
                return null;
            }
            final Entry entry = entries.get(file);
            if (entry != null && entry.bytes.length == attributes.size()
                && entry.modified.equals(attributes.lastModifiedTime())
                && java.util.Objects.equals(entry.fileKey, attributes.fileKey())) {
                return entry.bytes;
            }
            if (entry != null) {
                entries.remove(file);
                bytes -= entry.bytes.length;
            }
            final byte[] content = Files.readAllBytes(file);
            if (content.length != attributes.size()) {
                return content;     // it changed while we read it: serve what was read, keep nothing
            }
            entries.put(file, new Entry(content, attributes.lastModifiedTime(), attributes.fileKey()));
            bytes += content.length;
            for (var eldest = entries.entrySet().iterator(); bytes > MAX_BYTES && eldest.hasNext(); ) {
                bytes -= eldest.next().getValue().bytes.length;
                eldest.remove();
            }
            return content;
        }
    }

    /**
     * One connection: bytes received and not yet parsed (pipelined requests wait here), and the response being sent
     * from a head and a file.
     */
    private static final class Exchange {
        /** Null while the connection idles between requests (its buffer lent back to {@link #spareRequestBuffers}). */
        byte[] received = new byte[MAX_REQUEST + 1];
        int receivedLength;
        long bodyToSkip;
        byte[] head;
        int headSent;
        FileChannel body;
        long bodyLeft;
        /** The response being made answers an HTTP/1.0 request that asked to keep the connection. */
        boolean announceKeepAlive;
        /** The response being sent is the last: the connection closes after it. */
        boolean closeAfter;
        boolean outputShut;
        boolean peerEnded;
        /** The connection's unacknowledged bytes at the last serve: a change is the client taking the response. */
        int unsent;
        /** When a byte of a request last arrived or of a response was last queued (or the connection opened). */
        long lastActivityNs;
        /**
         * When the request now arriving began: its head's first byte, or, while its body is skipped, the head's end.
         * Meaningful while {@code receivedLength} or {@code bodyToSkip} is above 0.
         */
        long requestStartNs;

        /** As new, for another connection (the request buffer's stale bytes lie beyond receivedLength). */
        void reset() {
            receivedLength = 0;
            bodyToSkip = 0;
            head = null;
            headSent = 0;
            body = null;
            bodyLeft = 0;
            announceKeepAlive = false;
            closeAfter = false;
            outputShut = false;
            peerEnded = false;
            lastActivityNs = 0;
            requestStartNs = 0;
            unsent = 0;
        }
    }

    HttpFileService(NetStack stack, int port, Path root, dev.tern.tcp.TcpOptions options, ConnectionTraces traces)
        throws TernSocketException {
        this(stack, port, root, DEFAULT_KEEPALIVE_SECONDS, options, traces);
    }

    /** {@code keepAliveSeconds}: how long an idle persistent connection is kept; 0 closes after each response. */
    HttpFileService(NetStack stack, int port, Path root, int keepAliveSeconds, dev.tern.tcp.TcpOptions options,
                    ConnectionTraces traces) throws TernSocketException {
        this(stack, port, root, keepAliveSeconds, HEADER_TIMEOUT_SECONDS, options, traces);
    }

    /** {@code requestSeconds}: how long a request's head, then its body, may take to arrive whole (above 0). */
    HttpFileService(NetStack stack, int port, Path root, int keepAliveSeconds, int requestSeconds,
                    dev.tern.tcp.TcpOptions options, ConnectionTraces traces) throws TernSocketException {
        super(stack, port, options, traces);
        if (requestSeconds <= 0) {
            throw new IllegalArgumentException("request timeout not above 0: " + requestSeconds);
        }
        this.requestDeadlineNs = requestSeconds * 1_000_000_000L;
        this.headerTimeouts = stack.counters().counter("http.conn.header_timeouts");
        this.bodyTimeouts = stack.counters().counter("http.conn.body_timeouts");
        if (keepAliveSeconds < 0) {
            throw new IllegalArgumentException("keep-alive timeout below 0: " + keepAliveSeconds);
        }
        this.root = root.toAbsolutePath().normalize();
        this.keepAliveTimeoutNs = keepAliveSeconds * 1_000_000_000L;
        this.requestWaitNs = (keepAliveSeconds > 0 ? keepAliveSeconds : DEFAULT_KEEPALIVE_SECONDS) * 1_000_000_000L;
        this.idleTimeouts = stack.counters().counter("http.conn.idle_timeouts");
        this.sendTimeouts = stack.counters().counter("http.conn.send_timeouts");
        this.lingerTimeouts = stack.counters().counter("http.conn.linger_timeouts");
    }

    @Override
    protected void opened(TcpConnection connection) {
        final Exchange reused = idleExchanges.pollLast();
        final Exchange exchange = reused != null ? reused : new Exchange();
        exchange.lastActivityNs = pollNs;
        exchanges.put(connection, exchange);
        try {
            // As nginx's tcp_nodelay: a response's head and body go as written. With Nagle, a body written after a
            // head already in flight waited for its ACK, which a client delays 40 ms: 134 requests/s on keep-alive.
            connection.noDelay(true);
        } catch (TernSocketException e) {
            // the connection is already gone; serve() will find it closed
        }
    }

    @Override
    protected int serve(TcpConnection connection) throws TernSocketException {
        final Exchange exchange = exchanges.get(connection);
        final int unsent = connection.unsent();
        if (unsent != exchange.unsent) {
            exchange.unsent = unsent;
            exchange.lastActivityNs = pollNs;   // the client acknowledged part of a response: it is taking part
        }
        final int work = serve(connection, exchange);
        if (work > 0) {
            exchange.lastActivityNs = pollNs;
        } else if (work == 0 && stalled(exchange)) {
            return ABORT;
        }
        if (work >= 0) {
            // A pending response waits for room to write; else the next request (or the client's close) is awaited.
            interest(connection, exchange.head != null ? WRITE : READ);
        }
        return work;
    }

    private int serve(TcpConnection connection, Exchange exchange) throws TernSocketException {
        int work = 0;
        while (true) {
            if (exchange.head != null) {
                work += send(connection, exchange);
                if (exchange.head != null) {
                    return work;          // the send ring is full: go on at the next poll
                }
            }
            if (exchange.closeAfter) {
                return finish(connection, exchange) ? -1 : work;
            }
            // Between responses: read what the client sent, then take the next request from it.
            if (!exchange.peerEnded && exchange.receivedLength <= MAX_REQUEST) {
                final int n;
                if (exchange.received == null && connection.available() == 0) {
                    // An idle connection without a request buffer takes none until a request comes: this read only
                    // learns the end of the stream (-1) or a failure.
                    n = connection.read(NOTHING, 0, 0);
                } else {
                    if (exchange.received == null) {
                        final byte[] spare = spareRequestBuffers.pollLast();
                        exchange.received = spare != null ? spare : new byte[MAX_REQUEST + 1];
                    }
                    n = connection.read(MemorySegment.ofArray(exchange.received), exchange.receivedLength,
                        exchange.received.length - exchange.receivedLength);
                }
                if (n < 0) {
                    exchange.peerEnded = true;
                } else {
                    if (exchange.receivedLength == 0 && exchange.bodyToSkip == 0 && n > 0) {
                        exchange.requestStartNs = pollNs;   // a request's first byte: its deadline starts
                    }
                    exchange.receivedLength += n;
                    work += n > 0 ? 1 : 0;
                }
            }
            final boolean inBody = exchange.bodyToSkip > 0;
            skipBody(exchange);
            if (exchange.bodyToSkip > 0) {
                if (overdue(exchange, bodyTimeouts)) {
                    continue;
                }
                return awaitRequest(connection, exchange, work);
            }
            if (inBody) {
                exchange.requestStartNs = pollNs;   // the body is done: bytes after it begin the next head now
            }
            final int end = indexOf(exchange.received, exchange.receivedLength, END_OF_HEAD);
            if (end < 0) {
                if (exchange.receivedLength > MAX_REQUEST) {
                    respond(exchange, 431, "Request Header Fields Too Large", null, false, true);
                    exchange.receivedLength = 0;
                    continue;
                }
                if (exchange.receivedLength > 0 && overdue(exchange, headerTimeouts)) {
                    continue;
                }
                return awaitRequest(connection, exchange, work);
            }
            final String head = new String(exchange.received, 0, end, StandardCharsets.ISO_8859_1);
            consume(exchange, end + END_OF_HEAD.length);
            respondTo(exchange, head);
            // The body's deadline runs from the head's end, and so does a pipelined head already here; with neither,
            // the next byte read starts the next request's.
            exchange.requestStartNs = pollNs;
            work++;
        }
    }

    /**
     * Whether the request arriving (its head, or its body while {@code bodyToSkip} is above 0) has taken longer than
     * {@link #requestDeadlineNs} since it began: then it is answered 408 (RFC 9110 §15.5.9) and the connection closes
     * after that response, counted in {@code timeouts}. What the client sends after it is read and not answered.
     */
    private boolean overdue(Exchange exchange, org.agrona.concurrent.status.AtomicCounter timeouts) {
        if (pollNs - exchange.requestStartNs < requestDeadlineNs) {
            return false;
        }
        timeouts.increment();
        exchange.receivedLength = 0;
        exchange.bodyToSkip = 0;
        respond(exchange, 408, "Request Timeout", null, false, true);
        return true;
    }

    /**
     * Whether the client stopped taking part for longer than it may, nothing having moved at this serve: a response
     * waits (in the exchange or unacknowledged in the send ring) untaken for {@link #SEND_TIMEOUT_NS}, or, after the
     * last response went and was acknowledged, the client has not closed within {@link #LINGER_NS}. Counts it.
     */
    private boolean stalled(Exchange exchange) {
        final long quietNs = pollNs - exchange.lastActivityNs;
        if (exchange.head != null || exchange.unsent > 0) {
            if (quietNs >= SEND_TIMEOUT_NS) {
                sendTimeouts.increment();
                return true;
            }
        } else if (exchange.outputShut && quietNs >= LINGER_NS) {
            lingerTimeouts.increment();
            return true;
        }
        return false;
    }

    /**
     * No complete request to answer: returns what {@link #serve} returns. A client that ended between requests is
     * done, and one that ended mid-request too. A connection on which nothing moved either way for
     * {@link #requestWaitNs} is closed: the service's close sends a FIN, nothing being left unread (RFC 9112 §9.5:
     * a server may close an inactive connection at any time; a client retries a request that crossed the close on a
     * new connection, §9.3.1).
     */
    private int awaitRequest(TcpConnection connection, Exchange exchange, int work) {
        if (exchange.peerEnded) {
            return -1;
        }
        if (work > 0) {
            exchange.lastActivityNs = pollNs;
            return work;
        }
        final long quietNs = pollNs - exchange.lastActivityNs;
        if (quietNs < requestWaitNs || exchange.unsent > 0) {
            if (quietNs >= RELEASE_IDLE_NS && exchange.receivedLength == 0 && exchange.unsent == 0
                && connection.holdsBuffers()) {
                // Between requests for a second: the connection's rings go back (its buffer pages with them) until
                // the next request brings them back, so thousands of idle persistent connections hold only their
                // control blocks. Busy (data unacknowledged) it keeps them, and the next sweep tries again. Its
                // request buffer goes back too, as nginx frees a kept-alive connection's header buffer.
                if (connection.releaseIdleBuffers()) {
                    if (exchange.received != null && spareRequestBuffers.size() < MAX_IDLE_EXCHANGES) {
                        spareRequestBuffers.addLast(exchange.received);
                    }
                    exchange.received = null;
                }
            }
            return 0;   // (a response the client has not taken yet is the send timeout's, not an idle connection)
        }
        idleTimeouts.increment();
        return -1;
    }

    /** Drops up to {@code bodyToSkip} bytes of a request body from what was received. */
    private static void skipBody(Exchange exchange) {
        final int skip = (int) Math.min(exchange.bodyToSkip, exchange.receivedLength);
        if (skip > 0) {
            consume(exchange, skip);
            exchange.bodyToSkip -= skip;
        }
    }

    private static void consume(Exchange exchange, int bytes) {
        System.arraycopy(exchange.received, bytes, exchange.received, 0, exchange.receivedLength - bytes);
        exchange.receivedLength -= bytes;
    }

    private static int indexOf(byte[] data, int length, byte[] pattern) {
        outer:
        for (int i = 0; i + pattern.length <= length; i++) {
            for (int j = 0; j < pattern.length; j++) {
                if (data[i + j] != pattern[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** After the last response: no more output; released once the client has closed too (curl and wget do). */
    private boolean finish(TcpConnection connection, Exchange exchange) throws TernSocketException {
        if (!exchange.outputShut) {
            exchange.outputShut = true;
            connection.shutdownOutput();
        }
        int n;
        while ((n = connection.read(buffer, 0, (int) buffer.byteSize())) > 0) {
            // what a client sends after our last response is not answered
        }
        return n < 0;
    }

    private void respondTo(Exchange exchange, String head) {
        final String[] lines = lines(head);
        final String[] requestLine = lines[0].split(" ");
        if (requestLine.length != 3 || !requestLine[2].startsWith("HTTP/1.")) {
            respond(exchange, 400, "Bad Request", null, false, true);
            return;
        }
        final boolean http10 = requestLine[2].equals("HTTP/1.0");
        String connectionField = null;
        String contentLength = null;
        boolean chunked = false;
        for (int i = 1; i < lines.length; i++) {
            final int colon = lines[i].indexOf(':');
            if (colon <= 0) {
                respond(exchange, 400, "Bad Request", null, false, true);
                return;
            }
            final String name = lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT);
            final String value = lines[i].substring(colon + 1).trim();
            switch (name) {
                case "connection" -> connectionField = value.toLowerCase(Locale.ROOT);
                case "content-length" -> {
                    if (contentLength != null && !contentLength.equals(value)) {
                        // RFC 9112 §6.3: differing lengths make the framing unknowable.
                        respond(exchange, 400, "Bad Request", null, false, true);
                        return;
                    }
                    contentLength = value;
                }
                case "transfer-encoding" -> chunked = true;
                default -> {
                }
            }
        }
        if (chunked) {
            respond(exchange, 501, "Not Implemented", null, false, true);
            return;
        }
        if (contentLength != null) {
            try {
                exchange.bodyToSkip = Long.parseLong(contentLength);
            } catch (NumberFormatException e) {
                exchange.bodyToSkip = -1;
            }
            if (exchange.bodyToSkip < 0) {
                exchange.bodyToSkip = 0;
                respond(exchange, 400, "Bad Request", null, false, true);
                return;
            }
        }
        // RFC 9112 §9.3: 1.1 persists unless "close"; 1.0 only with "keep-alive"; none with keep-alive off.
        final boolean close = keepAliveTimeoutNs == 0
            || connectionField != null && hasToken(connectionField, "close")
            || http10 && (connectionField == null || !hasToken(connectionField, "keep-alive"));
        final boolean keepAlive10 = http10 && !close;
        final boolean headOnly = requestLine[0].equals("HEAD");
        if (!requestLine[0].equals("GET") && !headOnly) {
            respond(exchange, 405, "Method Not Allowed", null, false, true);
            return;
        }
        String target = requestLine[1];
        final int query = target.indexOf('?');
        if (query >= 0) {
            target = target.substring(0, query);
        }
        final String decoded = java.net.URLDecoder.decode(target.replace("+", "%2B"), StandardCharsets.UTF_8);
        int leadingSlashes = 0;
        while (leadingSlashes < decoded.length() && decoded.charAt(leadingSlashes) == '/') {
            leadingSlashes++;
        }
        final Path file = root.resolve(decoded.substring(leadingSlashes)).normalize();
        final BasicFileAttributes attributes = file.startsWith(root) ? attributesOf(file) : null;
        exchange.announceKeepAlive = keepAlive10;
        if (attributes == null || !attributes.isRegularFile()) {
            respond(exchange, 404, "Not Found", null, headOnly, close);
        } else {
            respond(exchange, 200, "OK", file, attributes, headOnly, close);
        }
        exchange.announceKeepAlive = false;
    }

    /**
     * The head's lines, split at CRLF by hand: {@code String.split("\r\n")} compiles a regular expression for every
     * request (a two-character separator misses split's fast path).
     */
    private static String[] lines(String head) {
        int count = 1;
        for (int i = head.indexOf("\r\n"); i >= 0; i = head.indexOf("\r\n", i + 2)) {
            count++;
        }
        final String[] lines = new String[count];
        int start = 0;
        for (int line = 0; line < count - 1; line++) {
            final int end = head.indexOf("\r\n", start);
            lines[line] = head.substring(start, end);
            start = end + 2;
        }
        lines[count - 1] = head.substring(start);
        return lines;
    }

    private static boolean hasToken(String field, String token) {
        for (String part : field.split(",")) {
            if (part.trim().equals(token)) {
                return true;
            }
        }
        return false;
    }

    private void respond(Exchange exchange, int status, String reason, Path file, boolean headOnly, boolean close) {
        respond(exchange, status, reason, file, null, headOnly, close);
    }

    /** One stat per request: a path that cannot be stat'ed is 404 (missing, or a directory on the way not searchable). */
    private static BasicFileAttributes attributesOf(Path file) {
        try {
            return Files.readAttributes(file, BasicFileAttributes.class);
        } catch (IOException e) {
            return null;
        }
    }

    private void respond(Exchange exchange, int status, String reason, Path file, BasicFileAttributes attributes,
                         boolean headOnly, boolean close) {
        long length = 0;
        String type = "text/plain; charset=utf-8";
        byte[] body = (status + " " + reason + "\n").getBytes(StandardCharsets.UTF_8);
        if (file != null) {
            try {
                final byte[] cached = attributes == null ? null : smallFiles.bytes(file, attributes);
                if (cached != null) {
                    body = cached;
                } else {
                    exchange.body = FileChannel.open(file, StandardOpenOption.READ);
                    length = exchange.body.size();
                    body = null;
                }
                type = contentType(file);
            } catch (IOException e) {
                status = 404;
                reason = "Not Found";
                body = "404 Not Found\n".getBytes(StandardCharsets.UTF_8);
            }
        }
        if (body != null) {
            length = body.length;
        }
        final String head = "HTTP/1.1 " + status + " " + reason + "\r\n"
            + "Server: tern\r\n"
            + "Date: " + date() + "\r\n"
            + "Content-Type: " + type + "\r\n"
            + "Content-Length: " + length + "\r\n"
            + (close ? "Connection: close\r\n" : "")
            // An HTTP/1.0 client that asked to keep the connection is told it is kept (RFC 9112 §C.2.2).
            + (exchange.announceKeepAlive ? "Connection: keep-alive\r\n" : "")
            + "\r\n";
        final byte[] headBytes = head.getBytes(StandardCharsets.ISO_8859_1);
        if (body != null && !headOnly) {
            exchange.head = new byte[headBytes.length + body.length];
            System.arraycopy(headBytes, 0, exchange.head, 0, headBytes.length);
            System.arraycopy(body, 0, exchange.head, headBytes.length, body.length);
        } else {
            exchange.head = headBytes;
        }
        exchange.headSent = 0;
        exchange.closeAfter = close;
        exchange.bodyLeft = headOnly || exchange.body == null ? 0 : length;
        if (exchange.bodyLeft == 0) {
            closeBody(exchange);
        }
    }

    private long dateSecond = -1;
    private String dateText;

    /** The Date field (RFC 9110 §6.6.1), formatted once a second. */
    private String date() {
        final long second = System.currentTimeMillis() / 1000;
        if (second != dateSecond) {
            dateSecond = second;
            dateText = HTTP_DATE.format(ZonedDateTime.now(ZoneOffset.UTC));
        }
        return dateText;
    }

    private static String contentType(Path file) {
        final String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
        if (name.endsWith(".html") || name.endsWith(".htm")) {
            return "text/html; charset=utf-8";
        }
        if (name.endsWith(".txt")) {
            return "text/plain; charset=utf-8";
        }
        if (name.endsWith(".json")) {
            return "application/json";
        }
        return "application/octet-stream";
    }

    /**
     * Sends as much of the response as the send ring takes now; when all of it is queued, the exchange is ready for
     * the next request ({@code head} back to null).
     */
    private int send(TcpConnection connection, Exchange exchange) throws TernSocketException {
        int work = 0;
        if (exchange.headSent == 0 && exchange.bodyLeft > 0
            && exchange.head.length + exchange.bodyLeft <= Math.min(buffer.byteSize(), connection.writableBytes())) {
            // A small response goes in one write, so in one segment: head and body written apart leave as two.
            MemorySegment.copy(exchange.head, 0, buffer, ValueLayout.JAVA_BYTE, 0, exchange.head.length);
            try {
                final int n = exchange.body.read(buffer.asByteBuffer().position(exchange.head.length)
                    .limit(exchange.head.length + (int) exchange.bodyLeft));
                if (n == exchange.bodyLeft) {
                    connection.write(buffer, 0, exchange.head.length + n);
                    exchange.headSent = exchange.head.length;
                    exchange.bodyLeft = 0;
                    work++;
                } else {
                    exchange.body.position(0);  // short read: send it the long way below
                }
            } catch (IOException e) {
                exchange.bodyLeft = 0;
                exchange.closeAfter = true;
            }
        }
        while (exchange.headSent < exchange.head.length) {
            final int n = connection.write(MemorySegment.ofArray(exchange.head), exchange.headSent,
                exchange.head.length - exchange.headSent);
            if (n == 0) {
                return work;
            }
            exchange.headSent += n;
            work++;
        }
        while (exchange.bodyLeft > 0) {
            final int room = Math.min(connection.writableBytes(), (int) Math.min(buffer.byteSize(), exchange.bodyLeft));
            if (room == 0) {
                return work;
            }
            try {
                final int n = exchange.body.read(buffer.asByteBuffer().limit(room));
                if (n <= 0) {
                    exchange.bodyLeft = 0;
                    exchange.closeAfter = true;     // the file shrank: the framing promised is broken
                    break;
                }
                connection.write(buffer, 0, n);
                exchange.bodyLeft -= n;
                work++;
            } catch (IOException e) {
                exchange.bodyLeft = 0;
                exchange.closeAfter = true;
            }
        }
        closeBody(exchange);
        exchange.head = null;
        return work;
    }

    private static void closeBody(Exchange exchange) {
        if (exchange.body != null) {
            try {
                exchange.body.close();
            } catch (IOException ignored) {
                // closing a file we only read
            }
            exchange.body = null;
        }
    }

    @Override
    protected void closing(TcpConnection connection) {
        final Exchange exchange = exchanges.remove(connection);
        if (exchange != null) {
            closeBody(exchange);
            if (idleExchanges.size() < MAX_IDLE_EXCHANGES) {
                exchange.reset();
                idleExchanges.addLast(exchange);
            }
        }
    }
}
