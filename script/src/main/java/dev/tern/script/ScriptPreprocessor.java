package dev.tern.script;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What happens to a script's text before it is parsed: conditional blocks and defined symbols.
 *
 * <ul>
 * <li>{@code #ifdef NAME}, {@code #ifndef NAME}, {@code #else}, {@code #endif}, each on a line of its own, keep or
 * drop the lines between them (blocks nest). The FreeBSD suite's packetdrill knows {@code #ifdef} of a system's name
 * ({@code #ifdef FreeBSD}, compared without case); here a name is defined when the profile's dialect is that system,
 * when the profile defines it, or when a {@code --define} (a line of the script or the command line) does.</li>
 * <li>{@code --define=NAME=VALUE} lines (packetdrill's {@code --define}, and {@code -D NAME=VALUE}) define symbols
 * for the whole script, as packetdrill reads a script's option lines before its statements. A word of a statement
 * that is a symbol with a value is that value, as in packetdrill's lexer; words in comments, quotes, shell commands
 * and Python blocks are left alone.</li>
 * </ul>
 *
 * <p>The result has the same lines as the text, those dropped left empty, so every message keeps its line number.
 */
final class ScriptPreprocessor {
    private static final Pattern DIRECTIVE = Pattern.compile("\\s*#\\s*(ifdef|ifndef|else|endif)\\b\\s*(.*?)\\s*");
    private static final Pattern DEFINE = Pattern.compile("\\s*(?:--define[=\\s]|-D\\s*)\\s*(\\S*)\\s*");
    private static final Pattern NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private ScriptPreprocessor() {
    }

    /** The text with its conditional blocks resolved and its symbols substituted. */
    static String apply(String file, String text, ScriptProfile profile) {
        final String[] lines = text.split("\r?\n", -1);
        final Map<String, String> defines = new HashMap<>(profile.defines());
        // A --define line counts for the whole script, as packetdrill takes option lines before the statements.
        for (int i = 0; i < lines.length; i++) {
            final Matcher m = DEFINE.matcher(lines[i]);
            if (m.matches()) {
                define(file, i + 1, m.group(1), defines);
                lines[i] = "";
            }
        }
        conditionals(file, lines, defines, profile.dialect());
        return substitute(String.join("\n", lines), defines);
    }

    /** {@code NAME=VALUE} or {@code NAME} (defined for {@code #ifdef} only) into {@code defines}. */
    static void define(String file, int line, String definition, Map<String, String> defines) {
        final int equals = definition.indexOf('=');
        final String name = equals < 0 ? definition : definition.substring(0, equals);
        if (!NAME.matcher(name).matches()) {
            throw new ScriptException(file, line, "bad definition '" + definition + "': write NAME=VALUE or NAME");
        }
        defines.put(name, equals < 0 ? "" : definition.substring(equals + 1));
    }

    /** One open {@code #ifdef} or {@code #ifndef}: where, whether its lines are kept, whether it saw an else. */
    private record Block(int line, boolean outerActive, boolean condition, boolean inElse) {
        boolean active() {
            return outerActive && (inElse != condition);
        }
    }

    private static void conditionals(String file, String[] lines, Map<String, String> defines,
                                     ScriptDialect dialect) {
        final Deque<Block> open = new ArrayDeque<>();
        for (int i = 0; i < lines.length; i++) {
            final Matcher m = DIRECTIVE.matcher(lines[i]);
            final boolean active = open.isEmpty() || open.peek().active();
            if (!m.matches()) {
                if (!active) {
                    lines[i] = "";
                }
                continue;
            }
            final int line = i + 1;
            final String word = m.group(1);
            final String rest = m.group(2);
            lines[i] = "";
            switch (word) {
                case "ifdef", "ifndef" -> {
                    if (!NAME.matcher(rest).matches()) {
                        throw new ScriptException(file, line, "#" + word + " takes one name, like #" + word
                            + " FreeBSD, not '" + rest + "'");
                    }
                    final boolean defined = rest.equalsIgnoreCase(dialect.systemName())
                        || defines.keySet().stream().anyMatch(rest::equalsIgnoreCase);
                    open.push(new Block(line, active, word.equals("ifdef") == defined, false));
                }
                case "else", "endif" -> {
                    if (!rest.isEmpty()) {
                        throw new ScriptException(file, line, "#" + word + " takes nothing after it, not '" + rest
                            + "'");
                    }
                    if (open.isEmpty()) {
                        throw new ScriptException(file, line, "#" + word + " without an #ifdef or #ifndef before it");
                    }
                    final Block block = open.pop();
                    if (word.equals("else")) {
                        if (block.inElse()) {
                            throw new ScriptException(file, line, "a second #else for the #ifdef of line "
                                + block.line());
                        }
                        open.push(new Block(block.line(), block.outerActive(), block.condition(), true));
                    }
                }
                default -> throw new IllegalStateException("the pattern lets only four directives through");
            }
        }
        if (!open.isEmpty()) {
            throw new ScriptException(file, open.peek().line(), "this #ifdef or #ifndef has no #endif");
        }
    }

    /**
     * Words that are symbols with a value, replaced by it outside comments, double quotes, backquotes and Python
     * blocks (what packetdrill's lexer reads as other tokens).
     */
    private static String substitute(String text, Map<String, String> defines) {
        if (defines.values().stream().allMatch(String::isEmpty)) {
            return text;
        }
        final StringBuilder out = new StringBuilder(text.length());
        int i = 0;
        while (i < text.length()) {
            final int skip = skipped(text, i);
            if (skip > i) {
                out.append(text, i, skip);
                i = skip;
                continue;
            }
            final char c = text.charAt(i);
            if (Character.isLetter(c) || c == '_') {
                int end = i + 1;
                while (end < text.length() && (Character.isLetterOrDigit(text.charAt(end)) || text.charAt(end) == '_')) {
                    end++;
                }
                final String word = text.substring(i, end);
                final String value = defines.get(word);
                out.append(value == null || value.isEmpty() ? word : value);
                i = end;
            } else if (Character.isDigit(c)) {
                // A number's digits and letters (0x1F) are no word.
                int end = i + 1;
                while (end < text.length() && Character.isLetterOrDigit(text.charAt(end))) {
                    end++;
                }
                out.append(text, i, end);
                i = end;
            } else {
                out.append(c);
                i++;
            }
        }
        return out.toString();
    }

    /** The end of a comment, quoted text, shell command or Python block starting at {@code i}; {@code i} if none. */
    private static int skipped(String text, int i) {
        if (text.startsWith("//", i)) {
            return end(text, text.indexOf('\n', i), 0);
        }
        if (text.startsWith("/*", i)) {
            return end(text, text.indexOf("*/", i + 2), 2);
        }
        if (text.startsWith("%{", i)) {
            return end(text, text.indexOf("}%", i + 2), 2);
        }
        final char c = text.charAt(i);
        if (c == '"' || c == '`') {
            return end(text, text.indexOf(c, i + 1), 1);
        }
        return i;
    }

    private static int end(String text, int at, int length) {
        return at < 0 ? text.length() : at + length;
    }
}
