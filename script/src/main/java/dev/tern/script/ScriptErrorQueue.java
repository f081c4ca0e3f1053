package dev.tern.script;

import dev.tern.tcp.SendCompletions;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code recvmsg(fd, {msg_name(...)=..., msg_iov(1)=[{...,0}], msg_flags=MSG_ERRQUEUE, msg_control=[{cmsg_level=
 * CMSG_LEVEL_IP, cmsg_type=CMSG_TYPE_RECVERR, cmsg_data={ee_errno=0, ee_origin=SO_EE_ORIGIN_ZEROCOPY, ee_type=0,
 * ee_code=SO_EE_CODE_ZEROCOPY_COPIED, ee_info=FIRST, ee_data=LAST}}]}, MSG_ERRQUEUE)}: reads the connection's send
 * completion notice ({@link SendCompletions}) as Linux's error queue gives it, a struct sock_extended_err whose ids
 * run from ee_info to ee_data, and checks it against the one written. With none waiting it is EAGAIN, blocking or
 * not, as Linux's. The notice carries no bytes: the call returns 0.
 */
final class ScriptErrorQueue {
    /** Linux's SO_EE_ORIGIN_ZEROCOPY and SO_EE_CODE_ZEROCOPY_COPIED (include/uapi/linux/errqueue.h). */
    static final int ORIGIN_ZEROCOPY = 5;
    static final int CODE_COPIED = 1;

    private static final Pattern NOTICE = Pattern.compile("msg_control=\\[\\{cmsg_level=(\\w+),cmsg_type=(\\w+),"
        + "cmsg_data=\\{ee_errno=(\\w+),ee_origin=(\\w+),ee_type=(\\w+),ee_code=(\\w+),ee_info=(\\w+),"
        + "ee_data=(\\w+)}}]");
    private static final Pattern IOV = Pattern.compile("msg_iov\\(\\d+\\)=\\[.*]");

    private ScriptErrorQueue() {
    }

    static ScriptRunner.Result receive(ScriptRunner runner, ScriptLine.Call c, SendCompletions completions,
                                       int connection) {
        final String message = c.args().get(1);
        final List<String> fields = message.startsWith("{") && message.endsWith("}")
            ? ScriptParser.splitOutside(message.substring(1, message.length() - 1), ',') : null;
        if (fields == null) {
            throw runner.failure(c.line(), "recvmsg takes a struct msghdr: {msg_name(...)=..., msg_iov(1)=[{...,0}], "
                + "msg_flags=MSG_ERRQUEUE, msg_control=[...]}");
        }
        Matcher expected = null;
        for (String field : fields) {
            final String f = field.replaceAll("\\s", "");
            if (f.equals("msg_name(...)=...") || IOV.matcher(f).matches() || f.equals("msg_flags=MSG_ERRQUEUE")
                || f.equals("msg_flags=0") || f.equals("msg_control=[]")) {
                continue;
            }
            final Matcher m = NOTICE.matcher(f);
            if (!m.matches()) {
                throw runner.failure(c.line(), "recvmsg MSG_ERRQUEUE: '" + field.strip() + "' is not supported: the "
                    + "error queue holds send completion notices only, msg_control=[{cmsg_level=CMSG_LEVEL_IP, "
                    + "cmsg_type=CMSG_TYPE_RECVERR, cmsg_data={ee_errno=0, ee_origin=SO_EE_ORIGIN_ZEROCOPY, "
                    + "ee_type=0, ee_code=SO_EE_CODE_ZEROCOPY_COPIED, ee_info=N, ee_data=N}}]");
            }
            expected = m;
        }
        if (connection < 0 || !completions.ready(connection)) {
            return ScriptRunner.Result.fail("EAGAIN");
        }
        final long first = completions.first(connection);
        final long last = completions.last(connection);
        completions.take(connection);
        final String got = "{ee_errno=0, ee_origin=SO_EE_ORIGIN_ZEROCOPY, ee_type=0, ee_code="
            + "SO_EE_CODE_ZEROCOPY_COPIED, ee_info=" + first + ", ee_data=" + last + "}";
        if (expected == null) {
            throw runner.failure(c.line(), "recvmsg MSG_ERRQUEUE gave the notice " + got + ", the script expects "
                + "no control message");
        }
        final boolean same = level(expected.group(1)) && type(expected.group(2))
            && value(runner, c, expected.group(3)) == 0
            && value(runner, c, expected.group(4)) == ORIGIN_ZEROCOPY
            && value(runner, c, expected.group(5)) == 0
            && value(runner, c, expected.group(6)) == CODE_COPIED
            && value(runner, c, expected.group(7)) == first
            && value(runner, c, expected.group(8)) == last;
        if (!same) {
            throw runner.failure(c.line(), "recvmsg MSG_ERRQUEUE gave " + got + " (cmsg_level=CMSG_LEVEL_IP, "
                + "cmsg_type=CMSG_TYPE_RECVERR), the script expects " + expected.group(0).substring(
                    "msg_control=".length()));
        }
        return ScriptRunner.Result.ok(0);
    }

    private static boolean level(String name) {
        return name.equals("CMSG_LEVEL_IP") || name.equals("SOL_IP") || name.equals("IPPROTO_IP") || name.equals("0");
    }

    private static boolean type(String name) {
        // IP_RECVERR is 11 (include/uapi/linux/in.h).
        return name.equals("CMSG_TYPE_RECVERR") || name.equals("IP_RECVERR") || name.equals("11");
    }

    /** A field's value: a number, or one of the names the notice uses. */
    private static long value(ScriptRunner runner, ScriptLine.Call c, String text) {
        return switch (text) {
            case "SO_EE_ORIGIN_ZEROCOPY" -> ORIGIN_ZEROCOPY;
            case "SO_EE_CODE_ZEROCOPY_COPIED" -> CODE_COPIED;
            default -> {
                if (!text.matches("\\d+|0x[0-9a-fA-F]+")) {
                    throw runner.failure(c.line(), "recvmsg MSG_ERRQUEUE: '" + text + "' is not a number or a name "
                        + "Tern knows (SO_EE_ORIGIN_ZEROCOPY, SO_EE_CODE_ZEROCOPY_COPIED)");
                }
                yield Long.decode(text);
            }
        };
    }
}
