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
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A small HTTP/1.1 server of static files (RFC 9110, RFC 9112): GET and HEAD of files under one directory, enough
 * for curl and wget. One request per connection ({@code Connection: close}); paths that leave the directory, or
 * name a directory, are 404. Polled from the command's loop like the other services.
 */
final class HttpFileService extends TcpService {
    private static final int MAX_REQUEST = 8192;
    private static final DateTimeFormatter HTTP_DATE = DateTimeFormatter.RFC_1123_DATE_TIME;

    private final Path root;
    private final Map<TcpConnection, Exchange> exchanges = new HashMap<>();

    /** Where one connection is: reading its request, or sending the response from a file. */
    private static final class Exchange {
        final StringBuilder request = new StringBuilder();
        byte[] head;
        int headSent;
        FileChannel body;
        long bodyLeft;
        boolean done;
    }

    HttpFileService(NetStack stack, int port, Path root, dev.tern.tcp.TcpOptions options, ConnectionTraces traces)
        throws TernSocketException {
        super(stack, port, options, traces);
        this.root = root.toAbsolutePath().normalize();
    }

    @Override
    protected void opened(TcpConnection connection) {
        exchanges.put(connection, new Exchange());
    }

    @Override
    protected int serve(TcpConnection connection) throws TernSocketException {
        final Exchange exchange = exchanges.get(connection);
        if (exchange.head == null) {
            final int n = connection.read(buffer, 0, (int) buffer.byteSize());
            if (n < 0) {
                return -1;
            }
            if (n == 0) {
                return 0;
            }
            exchange.request.append(new String(buffer.asSlice(0, n).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.ISO_8859_1));
            final int end = exchange.request.indexOf("\r\n\r\n");
            if (end < 0) {
                if (exchange.request.length() > MAX_REQUEST) {
                    respond(exchange, 431, "Request Header Fields Too Large", null, false);
                }
                return 1;
            }
            respondTo(exchange, exchange.request.substring(0, end));
        }
        return send(connection, exchange);
    }

    private void respondTo(Exchange exchange, String head) {
        final String[] requestLine = head.split("\r\n", 2)[0].split(" ");
        if (requestLine.length != 3 || !requestLine[2].startsWith("HTTP/1.")) {
            respond(exchange, 400, "Bad Request", null, false);
            return;
        }
        final boolean headOnly = requestLine[0].equals("HEAD");
        if (!requestLine[0].equals("GET") && !headOnly) {
            respond(exchange, 405, "Method Not Allowed", null, false);
            return;
        }
        String target = requestLine[1];
        final int query = target.indexOf('?');
        if (query >= 0) {
            target = target.substring(0, query);
        }
        final String decoded = java.net.URLDecoder.decode(target.replace("+", "%2B"), StandardCharsets.UTF_8);
        final Path file = root.resolve(decoded.replaceFirst("^/+", "")).normalize();
        if (!file.startsWith(root) || !Files.isRegularFile(file) || !Files.isReadable(file)) {
            respond(exchange, 404, "Not Found", null, headOnly);
            return;
        }
        respond(exchange, 200, "OK", file, headOnly);
    }

    private void respond(Exchange exchange, int status, String reason, Path file, boolean headOnly) {
        long length = 0;
        String type = "text/plain; charset=utf-8";
        byte[] body = (status + " " + reason + "\n").getBytes(StandardCharsets.UTF_8);
        if (file != null) {
            try {
                exchange.body = FileChannel.open(file, StandardOpenOption.READ);
                length = exchange.body.size();
                body = null;
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
            + "Date: " + HTTP_DATE.format(ZonedDateTime.now(ZoneOffset.UTC)) + "\r\n"
            + "Content-Type: " + type + "\r\n"
            + "Content-Length: " + length + "\r\n"
            + "Connection: close\r\n\r\n";
        final byte[] headBytes = head.getBytes(StandardCharsets.ISO_8859_1);
        if (body != null && !headOnly) {
            exchange.head = new byte[headBytes.length + body.length];
            System.arraycopy(headBytes, 0, exchange.head, 0, headBytes.length);
            System.arraycopy(body, 0, exchange.head, headBytes.length, body.length);
        } else {
            exchange.head = headBytes;
        }
        exchange.bodyLeft = headOnly || exchange.body == null ? 0 : length;
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

    /** Sends as much of the response as the send ring takes now; closes when all of it is queued. */
    private int send(TcpConnection connection, Exchange exchange) throws TernSocketException {
        int work = 0;
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
                    break;
                }
                connection.write(buffer, 0, n);
                exchange.bodyLeft -= n;
                work++;
            } catch (IOException e) {
                exchange.bodyLeft = 0;
            }
        }
        if (!exchange.done) {
            exchange.done = true;
            connection.shutdownOutput();
        }
        // Wait for the client to close after reading (curl and wget do); then release.
        final int n = connection.read(buffer, 0, (int) buffer.byteSize());
        return n < 0 ? -1 : work;
    }

    @Override
    protected void closing(TcpConnection connection) {
        final Exchange exchange = exchanges.remove(connection);
        if (exchange != null && exchange.body != null) {
            try {
                exchange.body.close();
            } catch (IOException ignored) {
                // closing a file we only read
            }
        }
    }
}
