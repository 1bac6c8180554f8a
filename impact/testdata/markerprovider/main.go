// Command markerprovider is a terraform provider for the impact tests: it
// appends a line to the file named at build time (-X main.marker=PATH)
// whenever it is started, then serves one resource type, marker_thing,
// whose id is "id-" followed by its value.
package main

import (
	"context"
	"os"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

var marker string

var thingType = tftypes.Object{AttributeTypes: map[string]tftypes.Type{"id": tftypes.String, "value": tftypes.String}}

func main() {
	if marker != "" {
		f, err := os.OpenFile(marker, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err == nil {
			f.WriteString("started\n")
			f.Close()
		}
	}
	if err := tf6server.Serve("example.com/test/marker", func() tfprotov6.ProviderServer { return &server{} }); err != nil {
		os.Exit(1)
	}
}

// server implements what terraform calls for a plan, an apply and a show;
// the embedded interface is nil: any other call fails loudly.
type server struct {
	tfprotov6.ProviderServer
}

func schema() *tfprotov6.Schema {
	return &tfprotov6.Schema{Block: &tfprotov6.SchemaBlock{Attributes: []*tfprotov6.SchemaAttribute{
		{Name: "id", Type: tftypes.String, Computed: true},
		{Name: "value", Type: tftypes.String, Optional: true},
	}}}
}

func (s *server) GetMetadata(context.Context, *tfprotov6.GetMetadataRequest) (*tfprotov6.GetMetadataResponse, error) {
	return &tfprotov6.GetMetadataResponse{Resources: []tfprotov6.ResourceMetadata{{TypeName: "marker_thing"}}}, nil
}

func (s *server) GetProviderSchema(context.Context, *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	return &tfprotov6.GetProviderSchemaResponse{
		Provider:          &tfprotov6.Schema{Block: &tfprotov6.SchemaBlock{}},
		ResourceSchemas:   map[string]*tfprotov6.Schema{"marker_thing": schema()},
		DataSourceSchemas: map[string]*tfprotov6.Schema{},
		Functions:         map[string]*tfprotov6.Function{},
	}, nil
}

func (s *server) GetResourceIdentitySchemas(context.Context, *tfprotov6.GetResourceIdentitySchemasRequest) (*tfprotov6.GetResourceIdentitySchemasResponse, error) {
	return &tfprotov6.GetResourceIdentitySchemasResponse{IdentitySchemas: map[string]*tfprotov6.ResourceIdentitySchema{}}, nil
}

func (s *server) GetFunctions(context.Context, *tfprotov6.GetFunctionsRequest) (*tfprotov6.GetFunctionsResponse, error) {
	return &tfprotov6.GetFunctionsResponse{Functions: map[string]*tfprotov6.Function{}}, nil
}

func (s *server) ValidateProviderConfig(_ context.Context, req *tfprotov6.ValidateProviderConfigRequest) (*tfprotov6.ValidateProviderConfigResponse, error) {
	return &tfprotov6.ValidateProviderConfigResponse{}, nil
}

func (s *server) ConfigureProvider(context.Context, *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	return &tfprotov6.ConfigureProviderResponse{}, nil
}

func (s *server) StopProvider(context.Context, *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	return &tfprotov6.StopProviderResponse{}, nil
}

func (s *server) ValidateResourceConfig(context.Context, *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return &tfprotov6.ValidateResourceConfigResponse{}, nil
}

func (s *server) UpgradeResourceState(_ context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	v, err := req.RawState.UnmarshalWithOpts(thingType, tfprotov6.UnmarshalOpts{})
	if err != nil {
		return nil, err
	}
	dv, err := tfprotov6.NewDynamicValue(thingType, v)
	return &tfprotov6.UpgradeResourceStateResponse{UpgradedState: &dv}, err
}

func (s *server) ReadResource(_ context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return &tfprotov6.ReadResourceResponse{NewState: req.CurrentState}, nil
}

// withID is v (an object) with id set to id.
func withID(v tftypes.Value, id tftypes.Value) (*tfprotov6.DynamicValue, error) {
	var attrs map[string]tftypes.Value
	if err := v.As(&attrs); err != nil {
		return nil, err
	}
	attrs["id"] = id
	dv, err := tfprotov6.NewDynamicValue(thingType, tftypes.NewValue(thingType, attrs))
	return &dv, err
}

func (s *server) PlanResourceChange(_ context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	proposed, err := req.ProposedNewState.Unmarshal(thingType)
	if err != nil {
		return nil, err
	}
	prior, err := req.PriorState.Unmarshal(thingType)
	if err != nil {
		return nil, err
	}
	if proposed.IsNull() {
		return &tfprotov6.PlanResourceChangeResponse{PlannedState: req.ProposedNewState}, nil
	}
	var resp tfprotov6.PlanResourceChangeResponse
	if prior.IsNull() {
		resp.PlannedState, err = withID(proposed, tftypes.NewValue(tftypes.String, tftypes.UnknownValue))
		return &resp, err
	}
	var was map[string]tftypes.Value
	if err := prior.As(&was); err != nil {
		return nil, err
	}
	resp.PlannedState, err = withID(proposed, was["id"])
	return &resp, err
}

func (s *server) ApplyResourceChange(_ context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	planned, err := req.PlannedState.Unmarshal(thingType)
	if err != nil {
		return nil, err
	}
	if planned.IsNull() {
		return &tfprotov6.ApplyResourceChangeResponse{NewState: req.PlannedState}, nil
	}
	var attrs map[string]tftypes.Value
	if err := planned.As(&attrs); err != nil {
		return nil, err
	}
	var value string
	if err := attrs["value"].As(&value); err != nil {
		return nil, err
	}
	resp := &tfprotov6.ApplyResourceChangeResponse{}
	resp.NewState, err = withID(planned, tftypes.NewValue(tftypes.String, "id-"+value))
	return resp, err
}
