package com.example.payments;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/** The payment-callback service: a provider's callback becomes a PaySuccess, recorded once. */
@SpringBootApplication
public class PaymentsApplication {
  /**
   * Runs the service until {@link CallbackDemo} has seen its two deliveries.
   *
   * @param args Spring Boot's arguments
   */
  public static void main(String[] args) {
    System.exit(SpringApplication.exit(SpringApplication.run(PaymentsApplication.class, args)));
  }
}
