// gpudash-node-images: writes the real-node tests' images as one tarball in the format
// `docker save` writes (manifest.json, each image's config, one layer each), which containerd
// imports (`ctr -n k8s.io images import`): no image registry is reachable here.
//
//	gpudash-node-images --workload PATH --plugin PATH --out images.tar
//
// Images: gpudash.local/pause:3.10 (/pause, the kubelet's sandbox image) and
// gpudash.local/model:1 (/model), both the static gpudash-workload binary;
// gpudash.local/nvidia-device-plugin:1 (/gpudash-device-plugin, static), run as the DaemonSet a
// site runs NVIDIA's plugin as.
package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"time"
)

type image struct {
	tag        string
	name       string
	entrypoint []string
	bin        []byte
}

func layer(bin []byte, name string) []byte {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	when := time.Unix(0, 0)
	must(tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(bin)), ModTime: when, Typeflag: tar.TypeReg}))
	_, err := tw.Write(bin)
	must(err)
	for _, d := range []string{"tmp/", "etc/"} {
		must(tw.WriteHeader(&tar.Header{Name: d, Mode: 0o1777, ModTime: when, Typeflag: tar.TypeDir}))
	}
	must(tw.Close())
	return buf.Bytes()
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

func main() {
	workload := flag.String("workload", "", "the static gpudash-workload binary")
	pluginPath := flag.String("plugin", "", "the static gpudash-device-plugin binary")
	out := flag.String("out", "images.tar", "the tarball to write")
	flag.Parse()
	bin, err := os.ReadFile(*workload)
	must(err)
	plugin, err := os.ReadFile(*pluginPath)
	must(err)
	images := []image{
		{tag: "gpudash.local/pause:3.10", name: "pause", entrypoint: []string{"/pause"}, bin: bin},
		{tag: "gpudash.local/model:1", name: "model", entrypoint: []string{"/model"}, bin: bin},
		{tag: "gpudash.local/nvidia-device-plugin:1", name: "gpudash-device-plugin", entrypoint: []string{"/gpudash-device-plugin"}, bin: plugin},
	}
	f, err := os.Create(*out)
	must(err)
	tw := tar.NewWriter(f)
	put := func(name string, b []byte) {
		must(tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: time.Unix(0, 0)}))
		_, err := tw.Write(b)
		must(err)
	}
	type entry struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	var manifest []entry
	for _, im := range images {
		l := layer(im.bin, im.name)
		ld := fmt.Sprintf("%x", sha256.Sum256(l))
		put(ld+"/layer.tar", l)
		cfg, err := json.Marshal(map[string]any{
			"architecture": runtime.GOARCH,
			"os":           "linux",
			"created":      "1970-01-01T00:00:00Z",
			"config":       map[string]any{"Entrypoint": im.entrypoint, "Env": []string{"PATH=/"}},
			"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + ld}},
		})
		must(err)
		cd := fmt.Sprintf("%x", sha256.Sum256(cfg))
		put(cd+".json", cfg)
		manifest = append(manifest, entry{Config: cd + ".json", RepoTags: []string{im.tag}, Layers: []string{ld + "/layer.tar"}})
	}
	m, err := json.Marshal(manifest)
	must(err)
	put("manifest.json", m)
	must(tw.Close())
	must(f.Close())
}
