import com.sun.source.util.JavacTask;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;

/**
 * Parses Java sources read from stdin, for msgcontract's escaping fuzz
 * target: each request is a line with a byte count, then that many bytes of
 * UTF-8 source; each answer is "ok" or the first syntax error, on one line.
 * Parsing (javac's lexer and parser, \\u processing included) is what text
 * escaping can break; types are checked by the corpus builds.
 */
public final class ParseServer {
  public static void main(String[] args) throws Exception {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    var in = System.in;
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    while (true) {
      StringBuilder len = new StringBuilder();
      int c;
      while ((c = in.read()) != '\n') {
        if (c < 0) {
          return;
        }
        len.append((char) c);
      }
      byte[] src = in.readNBytes(Integer.parseInt(len.toString().trim()));
      String text = new String(src, StandardCharsets.UTF_8);
      JavaFileObject file = new SimpleJavaFileObject(URI.create("string:///Gen.java"), JavaFileObject.Kind.SOURCE) {
        @Override
        public CharSequence getCharContent(boolean ignore) {
          return text;
        }
      };
      DiagnosticCollector<JavaFileObject> diags = new DiagnosticCollector<>();
      JavacTask task = (JavacTask) javac.getTask(null, null, diags, List.of("-proc:none"), null, List.of(file));
      task.parse();
      String answer = "ok";
      for (var d : diags.getDiagnostics()) {
        if (d.getKind() == javax.tools.Diagnostic.Kind.ERROR) {
          answer = "line " + d.getLineNumber() + ": " + d.getMessage(null).replace('\n', ' ');
          break;
        }
      }
      out.println(answer);
    }
  }
}
