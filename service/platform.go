package service

func (s *Service) platformRoutes() []route {
	return []route{}
}
