package workload

import "sort"

// Model is a DNN's gradient profile: what one worker sends per iteration.
type Model struct {
	Name string
	// Parameters is the number of trainable parameters; gradients are float32.
	Parameters int64
	Dataset    string
}

// GradientBytes is the size of one full gradient (4 bytes per parameter).
func (m Model) GradientBytes() int64 { return 4 * m.Parameters }

// Models are the paper's workloads (Sec. 6.1) with their usual parameter counts:
// the torchvision definitions for the CIFAR-100 image models (100-class heads)
// and BERT-base and a 2-layer, 650-unit LSTM language model for wikitext-2.
var Models = map[string]Model{
	"alexnet":     {Name: "AlexNet", Parameters: 57_413_000, Dataset: "CIFAR-100"},
	"inceptionv3": {Name: "Inception-V3", Parameters: 21_990_000, Dataset: "CIFAR-100"},
	"resnet50":    {Name: "ResNet50", Parameters: 23_713_000, Dataset: "CIFAR-100"},
	"vgg16":       {Name: "VGG16", Parameters: 134_670_000, Dataset: "CIFAR-100"},
	"bert":        {Name: "BERT", Parameters: 110_000_000, Dataset: "wikitext-2"},
	"lstm":        {Name: "LSTM", Parameters: 28_950_000, Dataset: "wikitext-2"},
}

// ModelNames lists the keys of Models, sorted.
func ModelNames() []string {
	var out []string
	for k := range Models {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
