package io.msgcontract.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The runtime's CREATE statements from their one home, the repository's {@code contracts/sql/<dialect>.sql},
 * which the build copies into the jar as {@code io/msgcontract/sql/<dialect>.sql} and the Go and Python runtimes read
 * too (docs/DESIGN.md, "The runtime's tables").
 *
 * <p>A file is a list of sections, one per table, in creation order: a {@code -- table: <name>} line starts one; each
 * statement ends with {@code ;} at the end of a line; other lines starting with {@code --} are comments. {@code
 * {{<name>}}} stands for the table's name, here always its default name.
 */
public final class Ddl {
  /** The dialects, as the files are named. */
  public static final String SQLITE = "sqlite";

  /** PostgreSQL. */
  public static final String POSTGRES = "postgres";

  /** MySQL and MariaDB (InnoDB). */
  public static final String MYSQL = "mysql";

  private static final String HEADER = "-- table: ";
  private static final Pattern PLACEHOLDER = Pattern.compile("\\{\\{([A-Za-z0-9_]*)\\}\\}");
  private static final Map<String, List<Section>> FILES = new ConcurrentHashMap<>();

  private Ddl() {}

  /**
   * One table's statements, as the file holds them.
   *
   * @param table the table's default name
   * @param statements in file order, without their {@code ;}, each on one line, placeholders kept
   */
  public record Section(String table, List<String> statements) {}

  /**
   * Splits a file's text into its sections.
   *
   * @param text the file's text
   * @return its sections in file order
   * @throws IllegalArgumentException when a statement is outside a section or lacks its {@code ;}
   */
  public static List<Section> parse(String text) {
    List<Section> secs = new ArrayList<>();
    List<String> stmts = null;
    StringBuilder stmt = new StringBuilder();
    String[] lines = text.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      String line = lines[i].strip();
      if (line.startsWith(HEADER)) {
        if (stmt.length() > 0) {
          throw new IllegalArgumentException("ddl: line " + (i + 1) + ": a statement before it has no \";\"");
        }
        stmts = new ArrayList<>();
        secs.add(new Section(line.substring(HEADER.length()).strip(), stmts));
      } else if (line.isEmpty() || line.startsWith("--")) {
        continue;
      } else if (stmts == null) {
        throw new IllegalArgumentException("ddl: line " + (i + 1) + ": a statement before the first \"" + HEADER + "\" line");
      } else {
        stmt.append(stmt.length() > 0 ? " " : "").append(line);
        if (line.endsWith(";")) {
          stmts.add(stmt.substring(0, stmt.length() - 1).strip());
          stmt.setLength(0);
        }
      }
    }
    if (stmt.length() > 0) {
      throw new IllegalArgumentException("ddl: the last statement has no \";\"");
    }
    return List.copyOf(secs.stream().map(s -> new Section(s.table(), List.copyOf(s.statements()))).toList());
  }

  /**
   * The sections of a dialect's file, read from the classpath.
   *
   * @param dialect {@link #SQLITE}, {@link #POSTGRES} or {@link #MYSQL}
   * @return its sections in file order
   */
  public static List<Section> file(String dialect) {
    return FILES.computeIfAbsent(dialect, d -> {
      String name = "/io/msgcontract/sql/" + d + ".sql";
      try (InputStream in = Ddl.class.getResourceAsStream(name)) {
        if (in == null) {
          throw new IllegalArgumentException("ddl: no resource " + name + " (dialect " + d + ")");
        }
        return parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    });
  }

  /**
   * The statements that create tables on a dialect, in order, under their default names.
   *
   * @param dialect {@link #SQLITE}, {@link #POSTGRES} or {@link #MYSQL}
   * @param tables the tables' default names
   * @return the statements, ready to run
   */
  public static List<String> statements(String dialect, String... tables) {
    List<Section> secs = file(dialect);
    List<String> out = new ArrayList<>();
    for (String t : tables) {
      Section sec = secs.stream().filter(s -> s.table().equals(t)).findFirst()
          .orElseThrow(() -> new IllegalArgumentException("ddl: contracts/sql/" + dialect + ".sql has no table " + t));
      for (String s : sec.statements()) {
        Matcher m = PLACEHOLDER.matcher(s);
        while (m.find()) {
          String name = m.group(1);
          if (secs.stream().noneMatch(x -> x.table().equals(name))) {
            throw new IllegalArgumentException("ddl: contracts/sql/" + dialect + ".sql: " + m.group() + " names no table of the file");
          }
        }
        out.add(m.replaceAll("$1"));
      }
    }
    return out;
  }

  /**
   * The dialect of a connection's database.
   *
   * @param conn a connection
   * @return {@link #SQLITE}, {@link #POSTGRES} or {@link #MYSQL}
   * @throws SQLException for another database
   */
  public static String dialect(Connection conn) throws SQLException {
    String product = conn.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
    if (product.contains("mysql") || product.contains("mariadb")) {
      return MYSQL;
    }
    if (product.contains("postgres")) {
      return POSTGRES;
    }
    if (product.contains("sqlite")) {
      return SQLITE;
    }
    throw new SQLException("msgcontract: unsupported database " + product + ": use SQLite, PostgreSQL, MySQL or MariaDB");
  }

  /**
   * Runs the statements that create tables, in order, on conn (they may run again: IF NOT EXISTS).
   *
   * @param conn a connection
   * @param dialect conn's dialect
   * @param tables the tables' default names
   * @throws SQLException from the database
   */
  public static void migrate(Connection conn, String dialect, String... tables) throws SQLException {
    try (Statement st = conn.createStatement()) {
      for (String s : statements(dialect, tables)) {
        st.execute(s);
      }
    }
  }
}
