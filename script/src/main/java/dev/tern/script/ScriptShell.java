package dev.tern.script;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads a script's shell command ({@code `...`}) as the kernel settings it makes, in the two suites' forms: Linux's
 * {@code sysctl -q net.ipv4.NAME=VALUE} (several settings on one line too), packetdrill's
 * {@code set_sysctls.py /proc/sys/net/ipv4/NAME=VALUE ...}, FreeBSD's {@code sysctl -w net.inet.tcp.NAME=VALUE} and
 * {@code kern.ipc.NAME=VALUE}. A command may hold several commands, on lines of their own (a backslash at the end of
 * a line goes on with the next) or after {@code ;}, and {@code #} comments. Packetdrill's Linux suite starts a script
 * with {@code ../common/defaults.sh} (any depth of {@code ../}), its production settings, which the {@code gtests}
 * profile holds, and may end it with {@code /tmp/sysctl_restore_${PPID}.sh}, which restores what
 * {@code set_sysctls.py} changed: with the stack gone at the script's end there is nothing to restore. Which
 * settings mean something to Tern is {@link ScriptSettings}'s to say; any other command is rejected with the reason.
 */
final class ScriptShell {
    /** The profile that holds the settings of packetdrill's {@code common/defaults.sh}. */
    static final String SUITE_DEFAULTS_PROFILE = "gtests";
    private static final Pattern DEFAULTS = Pattern.compile("(?:\\.\\./)*(?:\\./)?common/defaults\\.sh");
    private static final Pattern SET_SYSCTLS = Pattern.compile("(?:\\.\\./)*(?:\\./)?common/set_sysctls\\.py");
    private static final Pattern RESTORE = Pattern.compile("/tmp/sysctl_restore_\\$\\{?PPID}?\\.sh");
    private static final Pattern SETTING = Pattern.compile("([A-Za-z0-9_./]+)=(\"[^\"]*\"|'[^']*'|\\S+)");
    /**
     * Output redirections a setting line may carry ({@code > /dev/null 2>&1}, bash's {@code &> /dev/null}): they
     * change nothing here.
     */
    private static final Pattern REDIRECTION = Pattern.compile("\\s*(?:2>&1|(?:[12]|&)?>\\s*/dev/null)");
    /**
     * The FreeBSD suite's count of the process's TCP sockets in a state, in the orders it writes the flags:
     * {@code sockstat -4 -P tcp -s [-p PORT] | [grep packetdril |] grep -c STATE | grep N}.
     */
    private static final Pattern SOCKSTAT = Pattern.compile("sockstat\\s+-([46])\\s+-P\\s+tcp\\s+(?:-s\\s+)?"
        + "(?:-p\\s+(\\d+)\\s+)?(?:-s\\s+)?\\|\\s*(grep\\s+packetdril\\s*\\|\\s*)?grep\\s+-c\\s+([A-Z_0-9]+)"
        + "\\s*\\|\\s*grep\\s+(\\d+)");
    /** FreeBSD's {@code tcpdrop -s STATE}: drop the connections in a state. */
    private static final Pattern TCPDROP = Pattern.compile("tcpdrop\\s+-s\\s+([A-Z_0-9]+)");
    private static final Pattern WORDS = Pattern.compile("((?:[^\\s\"']|\"[^\"]*\"|'[^']*')+)");

    private ScriptShell() {
    }

    /**
     * The settings of the shell command {@code command} (without its backquotes) on line {@code line}, in the order
     * written; empty for a command that changes nothing.
     */
    static List<ScriptLine> settings(String file, int line, String command, ScriptProfile profile) {
        final List<ScriptLine> settings = new ArrayList<>();
        final Matcher count = SOCKSTAT.matcher(command.strip());
        if (count.matches()) {
            return List.of(new ScriptLine.SocketCount(line, ScriptLine.Sysctl.NEXT, count.group(4),
                count.group(2) == null ? -1 : Integer.parseInt(count.group(2)), count.group(3) != null,
                count.group(1).equals("6"), Integer.parseInt(count.group(5)), command.strip()));
        }
        final Matcher drop = TCPDROP.matcher(command.strip());
        if (drop.matches()) {
            return List.of(new ScriptLine.SocketDrop(line, ScriptLine.Sysctl.NEXT, drop.group(1), command.strip()));
        }
        for (String simple : commands(command)) {
            final List<String> words = new ArrayList<>();
            final Matcher w = WORDS.matcher(REDIRECTION.matcher(simple).replaceAll(""));
            while (w.find()) {
                words.add(w.group(1));
            }
            final String program = words.getFirst();
            if (DEFAULTS.matcher(program).matches() && words.size() == 1) {
                if (!profile.name().equals(SUITE_DEFAULTS_PROFILE)) {
                    throw new ScriptException(file, line, "'" + program + "' sets the production settings of "
                        + "packetdrill's Linux suite, which the profile " + SUITE_DEFAULTS_PROFILE + " holds: run with "
                        + "--profile " + SUITE_DEFAULTS_PROFILE);
                }
            } else if (RESTORE.matcher(program).matches() && words.size() == 1) {
                // The stack ends with the script: nothing set_sysctls.py changed outlives it.
            } else if (SET_SYSCTLS.matcher(program).matches()) {
                for (String word : words.subList(1, words.size())) {
                    if (!word.startsWith("/proc/sys/")) {
                        throw new ScriptException(file, line, "set_sysctls.py takes /proc/sys/NAME=VALUE, not '"
                            + word + "'");
                    }
                    settings.add(setting(file, line, word.substring("/proc/sys/".length())));
                }
            } else if (program.equals("sysctl")) {
                for (String word : words.subList(1, words.size())) {
                    // -q (quiet), -w (write: FreeBSD's and Linux's), -e (ignore unknown keys) change nothing here.
                    if (!word.equals("-q") && !word.equals("-w") && !word.equals("-e")) {
                        settings.add(setting(file, line, word));
                    }
                }
            } else {
                throw new ScriptException(file, line, "shell command '" + simple + "' is not supported: Tern runs "
                    + "in-process, there is no shell (only the sysctl settings docs/SCRIPTS.md lists)");
            }
        }
        return settings;
    }

    /**
     * The simple commands of a shell text: lines (joined at a backslash), split at {@code ;}, comments dropped. Of
     * {@code A || B} only A counts: a command the runner takes succeeds, so B would not run.
     */
    private static List<String> commands(String text) {
        final List<String> commands = new ArrayList<>();
        for (String line : text.replaceAll("\\\\\\s*\n", " ").split("\n")) {
            final int comment = line.indexOf('#');
            final String code = comment < 0 ? line : line.substring(0, comment);
            for (String part : code.split(";")) {
                final int or = part.indexOf("||");
                final String first = or < 0 ? part : part.substring(0, or);
                if (!first.isBlank()) {
                    commands.add(first.strip());
                }
            }
        }
        return commands;
    }

    /**
     * {@code NAME=VALUE}: the name with slashes written as dots ({@code net/ipv4/tcp_sack}, a /proc/sys path), the
     * value one number (decimal or 0x hex) or several between quotes.
     */
    private static ScriptLine.Sysctl setting(String file, int line, String word) {
        final Matcher m = SETTING.matcher(word);
        if (!m.matches()) {
            throw new ScriptException(file, line, "sysctl takes NAME=VALUE, not '" + word + "'");
        }
        final String name = m.group(1).replace('/', '.');
        if (name.equals(ScriptParser.FAST_OPEN_KEY_SYSCTL)) {
            try {
                return new ScriptLine.Sysctl(line, ScriptLine.Sysctl.NEXT, name,
                    dev.tern.tcp.FastOpenKeys.words(m.group(2).replaceAll("[\"']", " ")));
            } catch (IllegalArgumentException e) {
                throw new ScriptException(file, line, "sysctl " + name + ": " + e.getMessage());
            }
        }
        final String[] numbers = m.group(2).replaceAll("[\"']", " ").strip().split("\\s+");
        final long[] values = new long[numbers.length];
        for (int i = 0; i < numbers.length; i++) {
            try {
                values[i] = Long.decode(numbers[i]);
            } catch (NumberFormatException e) {
                throw new ScriptException(file, line, "sysctl " + name + " takes numbers, not '" + numbers[i] + "'");
            }
        }
        return new ScriptLine.Sysctl(line, ScriptLine.Sysctl.NEXT, name, values);
    }
}
