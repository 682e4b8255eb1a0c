// The OpenID Provider the sign-in tests run against: zitadel/oidc's example provider (its op
// package, an OpenID Certified implementation, with the example's in-memory storage and login
// page), on 127.0.0.1 only, with one confidential web client registered for gpudash.
//
//	gpudash-oidc-provider -listen 127.0.0.1:0 -client gpudash -secret-file s -redirect URL -users users.json
//
// It prints "issuer http://127.0.0.1:PORT/" once it listens, and serves until killed.
package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on (loopback)")
	client := flag.String("client", "gpudash", "the client id registered")
	secretFile := flag.String("secret-file", "", "file holding the client secret")
	redirect := flag.String("redirect", "", "the client's redirect URIs, comma separated")
	users := flag.String("users", "", "users as JSON (the example storage's User fields, by id)")
	flag.Parse()
	secret, err := os.ReadFile(*secretFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "secret:", err)
		os.Exit(2)
	}
	store, err := storage.StoreFromFile(*users)
	if err != nil {
		fmt.Fprintln(os.Stderr, "users:", err)
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(2)
	}
	issuer := fmt.Sprintf("http://%s/", ln.Addr().String())
	storage.RegisterClients(storage.WebClient(*client, strings.TrimSpace(string(secret)), strings.Split(*redirect, ",")...))
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	router := exampleop.SetupServer(issuer, storage.NewStorage(store), logger, false)
	fmt.Printf("issuer %s\n", issuer)
	if err := http.Serve(ln, router); err != nil {
		fmt.Fprintln(os.Stderr, "serve:", err)
		os.Exit(1)
	}
}
