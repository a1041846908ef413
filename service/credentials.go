package service

func (s *Service) credentialRoutes() []route {
	return []route{}
}
