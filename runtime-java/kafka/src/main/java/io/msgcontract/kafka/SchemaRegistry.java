package io.msgcontract.kafka;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A Confluent-compatible schema registry client with the two lookups the
 * wire format needs, both cached for the life of the client (ids are
 * immutable): a subject version's id (producers; they never register, like
 * runtime-go's and runtime-python's) and the subjects that hold an id
 * (consumers). Safe for concurrent use.
 */
public final class SchemaRegistry {
  /** The registry turned the request down (HTTP 4xx) or the id is not the subject's: the record is at fault. */
  public static final class RefusedException extends KafkaRuntimeException {
    private static final long serialVersionUID = 1L;

    RefusedException(String message) {
      super(message, null);
    }
  }

  /** The registry could not be asked (network, HTTP 5xx): worth another try. */
  public static final class UnavailableException extends KafkaRuntimeException {
    private static final long serialVersionUID = 1L;

    UnavailableException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private final String base;
  private final HttpClient http;
  private final Duration timeout;
  private final Map<String, Integer> ids = new ConcurrentHashMap<>();
  private final Map<Integer, List<String>> subjects = new ConcurrentHashMap<>();

  /**
   * Returns a client of the registry at baseUrl.
   *
   * @param baseUrl http(s) URL of the registry, e.g. the address of `msgcontract registry serve`
   * @param timeout bound of one request
   */
  public SchemaRegistry(String baseUrl, Duration timeout) {
    this.base = baseUrl.replaceAll("/+$", "");
    this.timeout = timeout;
    this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
  }

  /** The id of subject's version (0 or less: its latest version). */
  public int id(String subject, int version) {
    String v = version > 0 ? Integer.toString(version) : "latest";
    String k = subject + "\0" + v;
    Integer id = ids.get(k);
    if (id != null) {
      return id;
    }
    Object o = get("/subjects/" + URLEncoder.encode(subject, StandardCharsets.UTF_8).replace("+", "%20")
        + "/versions/" + v, "id of " + subject + " version " + v);
    if (!(o instanceof Map<?, ?> m) || !(m.get("id") instanceof Long n)) {
      throw new UnavailableException("confluent: id of " + subject + " version " + v + ": no id in the answer", null);
    }
    ids.put(k, n.intValue());
    return n.intValue();
  }

  /** The subjects that hold schema id. */
  public List<String> subjects(int id) {
    List<String> s = subjects.get(id);
    if (s != null) {
      return s;
    }
    Object o = get("/schemas/ids/" + id + "/versions", "subjects of schema id " + id);
    List<String> out = new ArrayList<>();
    if (o instanceof List<?> l) {
      for (Object x : l) {
        if (x instanceof Map<?, ?> m && m.get("subject") instanceof String sub && !out.contains(sub)) {
          out.add(sub);
        }
      }
    }
    out = List.copyOf(out);
    subjects.put(id, out);
    return out;
  }

  /**
   * Checks that id belongs to subject.
   *
   * @throws RefusedException when it does not, or the registry refuses the id
   * @throws UnavailableException when the registry cannot be asked
   */
  public void checkSubject(int id, String subject) {
    List<String> subs = subjects(id);
    if (!subs.contains(subject)) {
      throw new RefusedException("schema registry refused: schema id " + id + " belongs to " + subs
          + ", not to the event's subject " + subject);
    }
  }

  private Object get(String path, String what) {
    HttpRequest req = HttpRequest.newBuilder(URI.create(base + path)).timeout(timeout)
        .header("Accept", "application/vnd.schemaregistry.v1+json").GET().build();
    HttpResponse<String> resp;
    try {
      resp = http.send(req, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UnavailableException("confluent: " + what + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new UnavailableException("confluent: " + what + ": interrupted", e);
    }
    int st = resp.statusCode();
    if (st >= 400 && st < 500) {
      throw new RefusedException("confluent: " + what + ": schema registry refused: HTTP " + st + ": "
          + resp.body().strip());
    }
    if (st != 200) {
      throw new UnavailableException("confluent: " + what + ": HTTP " + st + ": " + resp.body().strip(), null);
    }
    try {
      return Json.parse(resp.body());
    } catch (IllegalArgumentException e) {
      throw new UnavailableException("confluent: " + what + ": " + e.getMessage(), e);
    }
  }
}
