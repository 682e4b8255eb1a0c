// gpudash-device-plugin: a device plugin for the real-node tests, speaking the kubelet's real
// device-plugin API (k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1) the way NVIDIA's does, for
// GPUs that are not there: device IDs as NVIDIA names them (GPU-<uuid>; time-slicing replicas
// GPU-<uuid>::<n>), its sharing read from the NVIDIA device plugin's config file format
// (sharing.timeSlicing: resources[].replicas, renameByDefault, failRequestsGreaterThanOne),
// NVIDIA_VISIBLE_DEVICES handed to the container, health changed on command, and registration
// again whenever the kubelet's socket is made anew (a kubelet restart).
//
//	gpudash-device-plugin --gpus 1 --seed orin-1 [--config sharing.yaml] [--state DIR]
//
// Commands, as files in --state (read every 200 ms): `unhealthy` lists GPU UUIDs (one per line)
// to report Unhealthy; while `hold` exists the plugin does not register (a plugin slow to come
// back after a kubelet restart). The plugin writes `registered` (a count) after each
// registration.
// It is not gpudash's simulator (which plays the API server): it runs on a real kubelet.
package main

import (
	"context"
	"crypto/sha256"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	"sigs.k8s.io/yaml"
)

// config is the part of the NVIDIA device plugin's config file (version v1) this plugin reads.
type config struct {
	Version string `json:"version"`
	Sharing struct {
		TimeSlicing struct {
			RenameByDefault            bool `json:"renameByDefault"`
			FailRequestsGreaterThanOne bool `json:"failRequestsGreaterThanOne"`
			Resources                  []struct {
				Name     string `json:"name"`
				Replicas int    `json:"replicas"`
				Rename   string `json:"rename"`
			} `json:"resources"`
		} `json:"timeSlicing"`
	} `json:"sharing"`
}

type plugin struct {
	pluginapi.UnimplementedDevicePluginServer
	resource string
	replicas int
	failOver bool
	uuids    []string
	state    string

	mu        sync.Mutex
	unhealthy map[string]bool
	changed   chan struct{}
}

// uuid derives a stable GPU UUID from the seed (the node) and the GPU's index, formatted as
// nvidia-smi prints them.
func uuid(seed string, i int) string {
	h := sha256.Sum256([]byte(seed + "/" + strconv.Itoa(i)))
	x := fmt.Sprintf("%x", h[:16])
	return fmt.Sprintf("GPU-%s-%s-%s-%s-%s", x[0:8], x[8:12], x[12:16], x[16:20], x[20:32])
}

func (p *plugin) devices() []*pluginapi.Device {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*pluginapi.Device
	for _, u := range p.uuids {
		health := pluginapi.Healthy
		if p.unhealthy[u] {
			health = pluginapi.Unhealthy
		}
		if p.replicas <= 1 {
			out = append(out, &pluginapi.Device{ID: u, Health: health})
			continue
		}
		for n := 0; n < p.replicas; n++ {
			out = append(out, &pluginapi.Device{ID: fmt.Sprintf("%s::%d", u, n), Health: health})
		}
	}
	return out
}

func (p *plugin) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{}, nil
}

func (p *plugin) ListAndWatch(_ *pluginapi.Empty, s grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	for {
		if err := s.Send(&pluginapi.ListAndWatchResponse{Devices: p.devices()}); err != nil {
			return err
		}
		select {
		case <-p.changed:
		case <-s.Context().Done():
			return nil
		}
	}
}

func (p *plugin) Allocate(_ context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	for _, c := range req.ContainerRequests {
		// As NVIDIA's plugin: with failRequestsGreaterThanOne, a container asking for more than one
		// replica of a shared GPU is refused (it would get no more of the GPU than with one).
		if p.replicas > 1 && p.failOver && len(c.DevicesIds) > 1 {
			return nil, fmt.Errorf("request for %q: invalid request: maximum request size for shared resources is 1", p.resource)
		}
		seen := map[string]bool{}
		var visible []string
		for _, id := range c.DevicesIds {
			u, _, _ := strings.Cut(id, "::")
			if !p.known(u) {
				return nil, fmt.Errorf("invalid allocation request for %q: unknown device: %s", p.resource, id)
			}
			if !seen[u] {
				seen[u] = true
				visible = append(visible, u)
			}
		}
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerAllocateResponse{
			Envs: map[string]string{"NVIDIA_VISIBLE_DEVICES": strings.Join(visible, ",")},
		})
	}
	return resp, nil
}

func (p *plugin) known(u string) bool {
	for _, x := range p.uuids {
		if x == u {
			return true
		}
	}
	return false
}

func (p *plugin) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}

// watchHealth reads the unhealthy file and tells ListAndWatch when the set changes.
func (p *plugin) watchHealth() {
	for {
		b, _ := os.ReadFile(filepath.Join(p.state, "unhealthy"))
		now := map[string]bool{}
		for _, l := range strings.Fields(string(b)) {
			now[l] = true
		}
		p.mu.Lock()
		differ := len(now) != len(p.unhealthy)
		for k := range now {
			differ = differ || !p.unhealthy[k]
		}
		if differ {
			p.unhealthy = now
		}
		p.mu.Unlock()
		if differ {
			log.Printf("unhealthy: %v", keys(now))
			select {
			case p.changed <- struct{}{}:
			default:
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func register(dir, endpoint, resource string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := grpc.NewClient("unix://"+filepath.Join(dir, "kubelet.sock"), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     endpoint,
		ResourceName: resource,
		Options:      &pluginapi.DevicePluginOptions{},
	})
	return err
}

func inode(path string) uint64 {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return 0
	}
	return st.Ino
}

func main() {
	gpus := flag.Int("gpus", 1, "GPUs on this node")
	seed := flag.String("seed", "gpudash", "what the GPUs' UUIDs derive from (the node's name)")
	cfgPath := flag.String("config", "", "the NVIDIA device plugin's config file (sharing.timeSlicing)")
	dir := flag.String("dir", pluginapi.DevicePluginPath, "the kubelet's device-plugin directory")
	state := flag.String("state", "", "where commands are read and the registration count written")
	flag.Parse()
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)

	p := &plugin{resource: "nvidia.com/gpu", replicas: 1, state: *state, unhealthy: map[string]bool{}, changed: make(chan struct{}, 1)}
	if *cfgPath != "" {
		b, err := os.ReadFile(*cfgPath)
		if err != nil {
			log.Fatalf("config: %v", err)
		}
		var c config
		if err := yaml.UnmarshalStrict(b, &c); err != nil {
			log.Fatalf("config %s: %v", *cfgPath, err)
		}
		if c.Version != "v1" {
			log.Fatalf("config %s: version %q, want v1", *cfgPath, c.Version)
		}
		ts := c.Sharing.TimeSlicing
		for _, r := range ts.Resources {
			if r.Name != "nvidia.com/gpu" {
				log.Fatalf("config %s: resource %q: only nvidia.com/gpu here", *cfgPath, r.Name)
			}
			if r.Replicas < 1 {
				log.Fatalf("config %s: replicas %d: must be at least 1", *cfgPath, r.Replicas)
			}
			p.replicas = r.Replicas
			switch {
			case r.Rename != "":
				p.resource = "nvidia.com/" + r.Rename
			case ts.RenameByDefault && r.Replicas > 1:
				p.resource = "nvidia.com/gpu.shared"
			}
		}
		p.failOver = ts.FailRequestsGreaterThanOne
	}
	for i := 0; i < *gpus; i++ {
		p.uuids = append(p.uuids, uuid(*seed, i))
	}
	if p.state != "" {
		go p.watchHealth()
	}

	endpoint := "gpudash-" + strings.NewReplacer("/", "-", ".", "-").Replace(p.resource) + ".sock"
	sock := filepath.Join(*dir, endpoint)
	_ = os.Remove(sock)
	lis, err := net.Listen("unix", sock)
	if err != nil {
		log.Fatalf("listen %s: %v", sock, err)
	}
	srv := grpc.NewServer()
	pluginapi.RegisterDevicePluginServer(srv, p)
	go func() {
		if err := srv.Serve(lis); err != nil {
			log.Fatalf("serve: %v", err)
		}
	}()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)

	// Register, and again whenever the kubelet's socket is a new one (the kubelet restarted and
	// forgot every plugin), as NVIDIA's plugin does by watching the directory.
	registered := 0
	var seen uint64
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := os.Stat(filepath.Join(p.state, "hold"))
		held := p.state != "" && err == nil
		if ino := inode(filepath.Join(*dir, "kubelet.sock")); ino != 0 && ino != seen && !held {
			if err := register(*dir, endpoint, p.resource); err != nil {
				log.Printf("register: %v (again in 250 ms)", err)
			} else {
				seen = ino
				registered++
				log.Printf("registered %s (%d GPUs, %d replicas each) at %s", p.resource, len(p.uuids), p.replicas, sock)
				if p.state != "" {
					_ = os.WriteFile(filepath.Join(p.state, "registered"), []byte(strconv.Itoa(registered)), 0o644)
				}
			}
		}
		select {
		case <-stop:
			srv.Stop()
			_ = os.Remove(sock)
			return
		case <-tick.C:
		}
		// The kubelet removes the plugin's socket when it restarts: listen again.
		if _, err := os.Stat(sock); os.IsNotExist(err) {
			srv.Stop()
			lis, err = net.Listen("unix", sock)
			if err != nil {
				log.Fatalf("listen %s: %v", sock, err)
			}
			srv = grpc.NewServer()
			pluginapi.RegisterDevicePluginServer(srv, p)
			go func(s *grpc.Server, l net.Listener) { _ = s.Serve(l) }(srv, lis)
			seen = 0
		}
	}
}
